//! What the OpenCL tests share: one test at a time on the device, and the
//! device (PoCL unless `FUNMEM_OPENCL_DEVICE` names another; with
//! `FUNMEM_SKIP_OPENCL` set, no device skips the test instead of failing).

use funmem_gpu::{select, DeviceInfo};
use std::path::Path;

/// One test at a time on the device: PoCL compiles kernels at their first
/// launch in its own threads, and a segfault was once seen with tests in
/// parallel on a cold cache.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the device for one test.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The device the tests run on, with PoCL's kernel cache in the target
/// folder.
pub fn device() -> Option<DeviceInfo> {
    static CACHE: std::sync::Once = std::sync::Once::new();
    CACHE.call_once(|| {
        if std::env::var_os("POCL_CACHE_DIR").is_none() {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pocl-cache");
            let _ = std::fs::create_dir_all(&dir);
            // SAFETY: every test calls this before its first OpenCL call,
            // and `Once` makes the others wait until it is set; nothing
            // writes the environment afterwards.
            unsafe { std::env::set_var("POCL_CACHE_DIR", dir) };
        }
    });
    let name = std::env::var("FUNMEM_OPENCL_DEVICE").unwrap_or_else(|_| "pocl".into());
    match select(Some(&name)) {
        Ok(d) => Some(d),
        Err(e) if std::env::var_os("FUNMEM_SKIP_OPENCL").is_some() => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}\n(set FUNMEM_SKIP_OPENCL=1 to skip the OpenCL tests)"),
    }
}
