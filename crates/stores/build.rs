//! Compiles the RocksDB shim (`cxx/rocksdb_shim.cc`) when the `rocksdb` feature is on,
//! and links the system RocksDB library it calls: `ROCKSDB_LIB_DIR` (set for the
//! workspace in `.cargo/config.toml` to Debian's `/usr/lib/x86_64-linux-gnu`) and the
//! headers of `librocksdb-dev` in `/usr/include` (or `ROCKSDB_INCLUDE_DIR`).
//!
//! `ROCKSDB_STATIC` (the variable `librocksdb-sys` reads too; `1` in
//! `.cargo/config.toml`) links the static archive `librocksdb.a` of the same package, as
//! RocksDB's own build links `db_bench` and as applications embed RocksDB: calls inside
//! RocksDB are then direct and its thread-locals cost no `__tls_get_addr` call, where the
//! shared `librocksdb.so` pays both on every operation. `ROCKSDB_STATIC=0` links the
//! shared library, as Debian's `db_bench` does.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    println!("cargo:rerun-if-env-changed=ROCKSDB_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=ROCKSDB_STATIC");
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_none() {
        return;
    }
    println!("cargo:rerun-if-changed=cxx/rocksdb_shim.cc");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("cxx/rocksdb_shim.cc")
        // RocksDB 7 needs C++17. NDEBUG as in Debian's release build of the library:
        // Options' default info_log_level depends on it (include/rocksdb/options.h).
        .std("c++17")
        .define("NDEBUG", None)
        .warnings(true);
    if let Some(dir) = std::env::var_os("ROCKSDB_INCLUDE_DIR") {
        build.include(dir);
    }
    build.compile("kvlab_rocksdb_shim");
    let lib_dir = std::env::var_os("ROCKSDB_LIB_DIR").map(std::path::PathBuf::from);
    if let Some(dir) = &lib_dir {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    let static_link = std::env::var("ROCKSDB_STATIC")
        .is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no" | "off"));
    if !static_link {
        println!("cargo:rustc-link-lib=dylib=rocksdb");
        return;
    }
    if let Some(dir) = &lib_dir {
        let archive = dir.join("librocksdb.a");
        assert!(
            archive.is_file(),
            "ROCKSDB_STATIC is set but {} does not exist: apt-get install -y librocksdb-dev, \
             or build with ROCKSDB_STATIC=0 to link the shared librocksdb",
            archive.display()
        );
    }
    println!("cargo:rustc-link-lib=static=rocksdb");
    // What the archive's objects call, as the shared library links them (`ldd
    // librocksdb.so`): the compression libraries, gflags and the C++ runtime.
    for lib in ["snappy", "lz4", "zstd", "z", "bz2", "gflags", "stdc++"] {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
