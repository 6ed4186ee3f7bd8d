//! The OpenCL backend: IMP to OpenCL C ([`codegen`]), devices
//! ([`device`]), a host driver that runs programs and accounts for time,
//! memory and transfers ([`driver`]), and benchmarks against a copy kernel
//! ([`mod@bench`]).
//!
//! Architecture invariant: this crate sits beside the oracle, on top of
//! lang, semantics and transforms; it reuses the interpreters' values,
//! limits and errors, so that the OpenCL backend is one more semantics of
//! IMP.

pub mod agree;
pub mod bench;
pub mod codegen;
pub mod device;
pub mod driver;

pub use codegen::{compile, Compiled};
pub use device::{devices, select, DeviceInfo, GpuError};
pub use driver::{RunStats, Runtime};
