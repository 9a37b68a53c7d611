//! Gives the shared library an SONAME, so a program linked with `-ldpmo` records the ABI it needs rather
//! than a path. Before 1.0 every minor version may break the C ABI, so the SONAME carries major and minor
//! (libdpmo.so.0.2); from 1.0 on it will carry the major only (libdpmo.so.1).
fn main() {
    let major = env!("CARGO_PKG_VERSION_MAJOR");
    let minor = env!("CARGO_PKG_VERSION_MINOR");
    let soname = if major == "0" {
        format!("libdpmo.so.0.{minor}")
    } else {
        format!("libdpmo.so.{major}")
    };
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
