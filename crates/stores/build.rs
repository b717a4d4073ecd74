//! Compiles the RocksDB shim (`cxx/rocksdb_shim.cc`) when the `rocksdb` feature is on,
//! and links the system RocksDB library it calls: `ROCKSDB_LIB_DIR` (set for the
//! workspace in `.cargo/config.toml` to Debian's `/usr/lib/x86_64-linux-gnu`) and the
//! headers of `librocksdb-dev` in `/usr/include` (or `ROCKSDB_INCLUDE_DIR`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    println!("cargo:rerun-if-env-changed=ROCKSDB_INCLUDE_DIR");
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
    if let Some(dir) = std::env::var_os("ROCKSDB_LIB_DIR") {
        println!(
            "cargo:rustc-link-search=native={}",
            std::path::Path::new(&dir).display()
        );
    }
    println!("cargo:rustc-link-lib=dylib=rocksdb");
}
