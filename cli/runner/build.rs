//! Builds `runlog-exec` (src/process/exec_shim.c), the static program every command the runner
//! runs starts through, on x86_64 Linux. Anywhere else, or without a C compiler, the runner
//! starts commands through `runlog __exec` instead: the same work, at the cost of one glibc
//! program start per command (see the C file for why that matters).

use std::path::PathBuf;
use std::process::Command;

const SOURCE: &str = "src/process/exec_shim.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rustc-check-cfg=cfg(runlog_exec_shim)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch != "x86_64" || os != "linux" {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let built = Command::new(&compiler)
        .args([
            "-nostdlib",
            "-static",
            "-Os",
            "-ffreestanding",
            "-fno-builtin",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-fno-pie",
            "-no-pie",
            "-Wall",
            "-Werror",
            "-o",
        ])
        .arg(out.join("runlog-exec"))
        .arg(SOURCE)
        .output();
    match built {
        Ok(o) if o.status.success() => println!("cargo:rustc-cfg=runlog_exec_shim"),
        Ok(o) => println!(
            "cargo:warning=runlog-exec not built ({compiler}: {}); commands start through `runlog __exec`",
            String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("failed")
        ),
        Err(e) => println!(
            "cargo:warning=runlog-exec not built ({compiler}: {e}); commands start through `runlog __exec`"
        ),
    }
}
