//! OpenCL platforms and devices: listing, choosing one by name, and the
//! errors of the OpenCL layer.

use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_id;
use serde::Serialize;
use std::fmt;

/// Something went wrong in the OpenCL layer, or the program went wrong on
/// the device.
#[derive(Debug)]
pub enum GpuError {
    /// No OpenCL library or no platform.
    NoPlatform(String),
    /// No device matches the name asked for.
    NoDevice {
        /// The name asked for.
        wanted: String,
        /// The devices there are.
        available: Vec<String>,
    },
    /// The OpenCL compiler refused the generated source.
    Build(String),
    /// A buffer did not fit in the device's memory.
    OutOfDeviceMemory(String),
    /// A kernel did not finish on the device (it faulted, or its launch
    /// asked for more than the device has): the OpenCL error surfaced at
    /// the next call that waits for the device.
    KernelFailed(String),
    /// An OpenCL call failed.
    Cl(String, i32),
    /// The program went wrong on the device (stuck, out of fuel or heap):
    /// the same kind of error the interpreters give.
    Program(Box<funmem_semantics::error::EvalError>),
}

impl GpuError {
    /// Whether the program went wrong (as opposed to the OpenCL setup).
    pub fn is_program_error(&self) -> bool {
        matches!(
            self,
            GpuError::Program(_) | GpuError::OutOfDeviceMemory(_) | GpuError::KernelFailed(_)
        )
    }

    /// Whether a resource limit was exceeded (fuel, the heap limit, the
    /// device's memory): nothing about the program's meaning.
    pub fn is_limit(&self) -> bool {
        match self {
            GpuError::OutOfDeviceMemory(_) => true,
            GpuError::Program(e) => e.is_limit(),
            _ => false,
        }
    }

    /// An OpenCL call's failure; out-of-memory codes become
    /// [`GpuError::OutOfDeviceMemory`].
    pub fn cl(what: impl Into<String>, e: ClError) -> GpuError {
        let what = what.into();
        match e.0 {
            // CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES,
            // CL_OUT_OF_HOST_MEMORY, CL_INVALID_BUFFER_SIZE
            -4 | -5 | -6 | -61 => GpuError::OutOfDeviceMemory(format!("{what}: {e}")),
            // DLOPEN_RUNTIME_LOAD_FAILED, CL_PLATFORM_NOT_FOUND_KHR
            -2000 | -1001 => GpuError::NoPlatform(no_platform_hint(&e.to_string())),
            _ => GpuError::Cl(what, e.0),
        }
    }
}

fn no_platform_hint(detail: &str) -> String {
    format!(
        "no OpenCL platform ({detail}). Install one: `scripts/install-deps` installs PoCL \
         (OpenCL on the CPU); for an NVIDIA GPU register its ICD with \
         `echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`"
    )
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoPlatform(m) => write!(f, "{m}"),
            GpuError::NoDevice { wanted, available } => write!(
                f,
                "{}; there are: {}",
                if wanted.trim().is_empty() {
                    "an empty device name matches no device: give a number from \
                     `funmem devices` or part of a device's name"
                        .to_string()
                } else {
                    format!("no OpenCL device matches `{wanted}`")
                },
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join("; ")
                }
            ),
            GpuError::Build(log) => write!(
                f,
                "the OpenCL compiler refused the generated kernels; its build log:\n{log}"
            ),
            GpuError::OutOfDeviceMemory(m) => write!(f, "out of device memory: {m}"),
            GpuError::KernelFailed(m) => write!(f, "a kernel failed on the device: {m}"),
            GpuError::Cl(what, code) => {
                write!(f, "OpenCL call failed: {what}: {}", ClError(*code))
            }
            GpuError::Program(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GpuError {}

/// One OpenCL device.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Position in `funmem devices`' list.
    pub index: usize,
    /// The platform's name.
    pub platform: String,
    /// The platform's vendor.
    pub vendor: String,
    /// The device's name.
    pub name: String,
    /// `gpu`, `cpu` or `other`.
    pub kind: String,
    /// The OpenCL version the device reports.
    pub version: String,
    /// Global memory in bytes.
    pub global_mem: u64,
    /// The largest single buffer in bytes.
    pub max_alloc: u64,
    /// Compute units.
    pub compute_units: u32,
    /// Whether it has double precision (`cl_khr_fp64`).
    pub fp64: bool,
    #[serde(skip)]
    pub(crate) id: usize,
}

impl DeviceInfo {
    pub(crate) fn id(&self) -> cl_device_id {
        self.id as cl_device_id
    }

    /// `platform: name`.
    pub fn label(&self) -> String {
        format!("{}: {}", self.platform, self.name)
    }
}

/// Serialises the OpenCL calls that set things up (platform discovery,
/// contexts, builds): the ICD loader's lazy initialisation and PoCL's
/// compiler are not safe to enter from several threads at once.
pub(crate) static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`SETUP`] (a panic elsewhere while holding it poisons nothing
/// that matters).
pub(crate) fn setup_lock() -> std::sync::MutexGuard<'static, ()> {
    SETUP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every device of every platform.
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    let _setup = setup_lock();
    let platforms = get_platforms().map_err(|e| GpuError::cl("clGetPlatformIDs", e))?;
    if platforms.is_empty() {
        return Err(GpuError::NoPlatform(no_platform_hint(
            "the OpenCL library found no platform",
        )));
    }
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_else(|_| "?".into());
        let vendor = p.vendor().unwrap_or_default().trim().to_string();
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            // A platform without devices reports CL_DEVICE_NOT_FOUND.
            Err(_) => continue,
        };
        for id in ids {
            let d = Device::new(id);
            let kind = match d.dev_type() {
                Ok(t) if t & CL_DEVICE_TYPE_GPU != 0 => "gpu",
                Ok(t) if t & CL_DEVICE_TYPE_CPU != 0 => "cpu",
                _ => "other",
            };
            out.push(DeviceInfo {
                index: out.len(),
                platform: pname.trim().to_string(),
                vendor: vendor.clone(),
                name: d.name().unwrap_or_default().trim().to_string(),
                kind: kind.to_string(),
                version: d.version().unwrap_or_default().trim().to_string(),
                global_mem: d.global_mem_size().unwrap_or(0),
                max_alloc: d.max_mem_alloc_size().unwrap_or(0),
                compute_units: d.max_compute_units().unwrap_or(0),
                fp64: d
                    .extensions()
                    .map(|e| e.contains("cl_khr_fp64"))
                    .unwrap_or(false),
                id: id as usize,
            });
        }
    }
    if out.is_empty() {
        return Err(GpuError::NoPlatform(no_platform_hint(
            "the OpenCL platforms have no devices",
        )));
    }
    Ok(out)
}

/// The device `wanted` names: its index in the list, or a case-insensitive
/// part of its platform's name, its vendor's or its own (`pocl`, `nvidia`,
/// `h100`).
/// Without a name: the first GPU, else the first device.
pub fn select(wanted: Option<&str>) -> Result<DeviceInfo, GpuError> {
    let all = devices()?;
    let found = match wanted {
        None => all.iter().find(|d| d.kind == "gpu").or_else(|| all.first()),
        // An empty name is part of every name: refuse it rather than
        // take whichever device comes first.
        Some(w) if w.trim().is_empty() => None,
        Some(w) => {
            let lw = w.to_lowercase();
            match w.parse::<usize>() {
                Ok(i) => all.get(i),
                Err(_) => all.iter().find(|d| {
                    format!("{} {}", d.label(), d.vendor)
                        .to_lowercase()
                        .contains(&lw)
                }),
            }
        }
    };
    found.cloned().ok_or_else(|| GpuError::NoDevice {
        wanted: wanted.unwrap_or("").to_string(),
        available: all
            .iter()
            .map(|d| format!("{} {}", d.index, d.label()))
            .collect(),
    })
}
