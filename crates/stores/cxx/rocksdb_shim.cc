// kvlab's RocksDB shim: the store's calls into RocksDB's C++ API, behind a small C ABI
// (declared again on the Rust side, crates/stores/src/rocksdb/ffi.rs; keep both in step).
//
// Why not RocksDB's own C API (include/rocksdb/c.h): its rocksdb_put builds a new
// WriteBatch per call (DB::Put) and rocksdb_get_pinned allocates a PinnableSlice per
// call. db_bench (tools/db_bench_tool.cc) keeps one WriteBatch per thread, cleared
// before each write, and one PinnableSlice per thread, reset before each read; a
// session here does the same, so kvlab and db_bench pay the same per-operation cost.
//
// Every function is noexcept: RocksDB reports errors as Status values, which are
// returned as strings the caller frees with kvlab_rdb_free; an exception (only
// std::bad_alloc) must not unwind into Rust, so it terminates the process.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/rate_limiter.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>

namespace {

char* copy_string(const std::string& s) noexcept {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) {
    std::memcpy(out, s.data(), s.size());
    out[s.size()] = '\0';
  }
  return out;
}

// Stores a failed status's text in *err (malloc'd) and returns -1; 0 for success.
int fail(const rocksdb::Status& s, char** err) noexcept {
  if (s.ok()) {
    return 0;
  }
  *err = copy_string(s.ToString());
  return -1;
}

// The perf level (include/rocksdb/perf_level.h) this thread last set through a session:
// RocksDB keeps the level per thread, and a session's operations run on whichever
// thread the worker runs them. In the executable, so reading it is one thread-pointer
// load, not a __tls_get_addr call.
__attribute__((tls_model("initial-exec"))) thread_local int thread_perf_level = 0;

}  // namespace

extern "C" {

// The database's options; kvlab fills every field (crates/stores/src/rocksdb/ffi.rs).
struct kvlab_rdb_options {
  const char* path;
  uint64_t block_cache_size_bytes;
  uint64_t write_buffer_size_bytes;
  int32_t max_write_buffer_number;
  int32_t max_background_jobs;
  int32_t max_open_files;
  int32_t level0_file_num_compaction_trigger;
  uint64_t target_file_size_base_bytes;
  uint64_t rate_limit_bytes_per_sec;
  double bloom_bits;
  // rocksdb::CompressionType and rocksdb::CompactionStyle values.
  uint8_t compression;
  uint8_t compaction_style;
  bool direct_reads;
  bool pipelined_write;
  bool statistics;
  bool cache_index_and_filter_blocks;
  bool destroy_on_open;
  // Open with DB::OpenForReadOnly: no write, no lock, no create.
  bool read_only;
  // A merge operator RocksDB knows by name (MergeOperator::CreateFromString: "put",
  // "uint64add", "stringappend", ...); empty for none.
  const char* merge_operator;
  // The column family the records live in (created when missing); empty: `default`,
  // and read-only, every column family's files listed.
  const char* column_family;
};

struct kvlab_rdb_db {
  rocksdb::DB* db;
  rocksdb::Options options;
  std::shared_ptr<rocksdb::Cache> cache;
  // Every column family the database has, open (RocksDB opens all of them or none,
  // read-only aside), and the one the records live in.
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::ColumnFamilyHandle* cf = nullptr;
  // Empty when the live files of every column family are listed.
  std::string cf_name;
};

// One worker's handle: options and the buffers reused from operation to operation.
struct kvlab_rdb_session {
  rocksdb::DB* db;
  // rocksdb::PerfLevel for the threads that run the session's operations.
  int perf_level;
  rocksdb::ColumnFamilyHandle* cf;
  rocksdb::WriteOptions write;
  rocksdb::ReadOptions read;
  rocksdb::WriteBatch batch;
  rocksdb::PinnableSlice value;
  // A MultiGet's keys, values and statuses, grown to the largest batch and kept.
  std::vector<rocksdb::Slice> keys;
  std::vector<rocksdb::PinnableSlice> values;
  std::vector<rocksdb::Status> statuses;
};

struct kvlab_rdb_iter {
  rocksdb::Iterator* it;
};

void kvlab_rdb_free(char* p) noexcept { std::free(p); }

// Opens (creating if missing) the database; NULL with *err set on failure.
kvlab_rdb_db* kvlab_rdb_open(const kvlab_rdb_options* o, char** err) noexcept {
  // The shim was compiled against one release's headers: the classes it touches
  // (Options, WriteBatch, PinnableSlice) change layout between releases, so a library of
  // another major.minor version is refused rather than misread.
  const std::string headers =
      std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR);
  const std::string library = rocksdb::GetRocksVersionAsString(false);
  if (library != headers) {
    *err = copy_string("librocksdb is version " + library + " but kvlab was built against " +
                       "the headers of " + headers + "; rebuild kvlab against the library");
    return nullptr;
  }
  auto handle = std::make_unique<kvlab_rdb_db>();
  rocksdb::Options& opts = handle->options;
  opts.create_if_missing = true;
  opts.write_buffer_size = o->write_buffer_size_bytes;
  opts.max_write_buffer_number = o->max_write_buffer_number;
  opts.max_background_jobs = o->max_background_jobs;
  opts.max_open_files = o->max_open_files;
  opts.target_file_size_base = o->target_file_size_base_bytes;
  opts.level0_file_num_compaction_trigger = o->level0_file_num_compaction_trigger;
  opts.use_direct_reads = o->direct_reads;
  opts.enable_pipelined_write = o->pipelined_write;
  opts.compression = static_cast<rocksdb::CompressionType>(o->compression);
  opts.compaction_style = static_cast<rocksdb::CompactionStyle>(o->compaction_style);
  if (o->rate_limit_bytes_per_sec > 0) {
    // The refill period and fairness of RocksDB's C API default
    // (rocksdb_ratelimiter_create as the rust-rocksdb crate calls it).
    opts.rate_limiter.reset(rocksdb::NewGenericRateLimiter(
        static_cast<int64_t>(o->rate_limit_bytes_per_sec), 100000, 10));
  }
  if (o->statistics) {
    opts.statistics = rocksdb::CreateDBStatistics();
  }
  if (o->merge_operator != nullptr && o->merge_operator[0] != '\0') {
    rocksdb::ConfigOptions config;
    rocksdb::Status s = rocksdb::MergeOperator::CreateFromString(
        config, o->merge_operator, &opts.merge_operator);
    if (!s.ok() || opts.merge_operator == nullptr) {
      *err = copy_string(std::string("merge operator `") + o->merge_operator +
                         "`: " + (s.ok() ? "unknown" : s.ToString()));
      return nullptr;
    }
  }
  handle->cache = rocksdb::NewLRUCache(o->block_cache_size_bytes);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = handle->cache;
  if (o->bloom_bits > 0) {
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(o->bloom_bits, false));
  }
  table.cache_index_and_filter_blocks = o->cache_index_and_filter_blocks;
  opts.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  if (o->destroy_on_open) {
    rocksdb::Status s = rocksdb::DestroyDB(o->path, opts);
    if (!s.ok() && !s.IsNotFound()) {
      fail(s, err);
      return nullptr;
    }
  }
  // Every column family the database has (a new database: only `default`), each with
  // the same options, as DB::Open requires them all.
  const std::string wanted = o->column_family != nullptr ? o->column_family : "";
  handle->cf_name = wanted;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(opts, o->path, &names).ok() || names.empty()) {
    names = {rocksdb::kDefaultColumnFamilyName};
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  size_t index = 0;
  bool found = false;
  for (size_t i = 0; i < names.size(); i++) {
    families.emplace_back(names[i], rocksdb::ColumnFamilyOptions(opts));
    const std::string& target = wanted.empty() ? rocksdb::kDefaultColumnFamilyName : wanted;
    if (names[i] == target) {
      index = i;
      found = true;
    }
  }
  if (o->read_only) {
    opts.create_if_missing = false;
    if (fail(rocksdb::DB::OpenForReadOnly(opts, o->path, families, &handle->handles,
                                          &handle->db),
             err) != 0) {
      return nullptr;
    }
  } else if (fail(rocksdb::DB::Open(opts, o->path, families, &handle->handles, &handle->db),
                  err) != 0) {
    return nullptr;
  }
  if (found) {
    handle->cf = handle->handles[index];
    return handle.release();
  }
  // The column family is missing. Records kvlab wrote before it used one (and db_bench
  // writes) are in `default`: refuse rather than show them an empty database.
  std::unique_ptr<rocksdb::Iterator> it(
      handle->db->NewIterator(rocksdb::ReadOptions(), handle->db->DefaultColumnFamily()));
  it->SeekToFirst();
  std::string refusal;
  if (it->Valid()) {
    refusal = "the database keeps its records in the column family `default`, not `" +
              wanted + "` (db_bench's databases do, and kvlab's made before it used `" +
              "usertable`): pass -p rocksdb.column_family=default to use them";
  } else if (o->read_only) {
    refusal = "the database has no column family `" + wanted + "`";
  }
  it.reset();
  rocksdb::ColumnFamilyHandle* created = nullptr;
  rocksdb::Status s = refusal.empty()
                          ? handle->db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(opts),
                                                           wanted, &created)
                          : rocksdb::Status::InvalidArgument(refusal);
  if (!s.ok()) {
    fail(s, err);
    for (auto* cf : handle->handles) {
      handle->db->DestroyColumnFamilyHandle(cf);
    }
    delete handle->db;
    return nullptr;
  }
  handle->handles.push_back(created);
  handle->cf = created;
  return handle.release();
}

void kvlab_rdb_close(kvlab_rdb_db* h) noexcept {
  if (h != nullptr) {
    for (auto* cf : h->handles) {
      h->db->DestroyColumnFamilyHandle(cf);
    }
    delete h->db;
    delete h;
  }
}

int kvlab_rdb_flush(kvlab_rdb_db* h, char** err) noexcept {
  return fail(h->db->Flush(rocksdb::FlushOptions(), h->handles), err);
}

// Compacts the whole key space (DB::CompactRange with no bounds), the bottommost level
// rewritten too (BottommostLevelCompaction::kForce), so that every live entry ends in
// files of target_file_size_base at the last level; waits for the compaction.
int kvlab_rdb_compact_all(kvlab_rdb_db* h, char** err) noexcept {
  rocksdb::Status s = h->db->Flush(rocksdb::FlushOptions(), h->cf);
  if (!s.ok()) {
    return fail(s, err);
  }
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  return fail(h->db->CompactRange(options, h->cf, nullptr, nullptr), err);
}

// The live SST files of the database (DB::GetLiveFilesMetaData), read one at a time
// with kvlab_rdb_live_file and freed with kvlab_rdb_live_files_free.
struct kvlab_rdb_live_files {
  std::vector<rocksdb::LiveFileMetaData> files;
};

kvlab_rdb_live_files* kvlab_rdb_live_files_new(kvlab_rdb_db* h) noexcept {
  auto* out = new kvlab_rdb_live_files();
  h->db->GetLiveFilesMetaData(&out->files);
  if (!h->cf_name.empty()) {
    // The records' column family's files only.
    std::vector<rocksdb::LiveFileMetaData> mine;
    for (auto& f : out->files) {
      if (f.column_family_name == h->cf_name) {
        mine.push_back(std::move(f));
      }
    }
    out->files = std::move(mine);
  }
  return out;
}

size_t kvlab_rdb_live_files_len(const kvlab_rdb_live_files* f) noexcept {
  return f->files.size();
}

// File i's level, entries, size and file name, and its smallest and largest user keys
// (valid until kvlab_rdb_live_files_free).
void kvlab_rdb_live_file(const kvlab_rdb_live_files* f, size_t i, int* level,
                         uint64_t* entries, uint64_t* size, const char** name,
                         size_t* name_len, const char** smallest, size_t* smallest_len,
                         const char** largest, size_t* largest_len) noexcept {
  const rocksdb::LiveFileMetaData& m = f->files[i];
  *level = m.level;
  *entries = m.num_entries;
  *size = m.size;
  *name = m.name.data();
  *name_len = m.name.size();
  *smallest = m.smallestkey.data();
  *smallest_len = m.smallestkey.size();
  *largest = m.largestkey.data();
  *largest_len = m.largestkey.size();
}

void kvlab_rdb_live_files_free(kvlab_rdb_live_files* f) noexcept { delete f; }

// RocksDB's statistics dump (Statistics::ToString), malloc'd; NULL when statistics are
// off.
char* kvlab_rdb_statistics(kvlab_rdb_db* h) noexcept {
  if (h->options.statistics == nullptr) {
    return nullptr;
  }
  return copy_string(h->options.statistics->ToString());
}

// A property's text (DB::GetProperty, which also prints the integer ones; some integer
// properties, such as rocksdb.num-files-at-level<N>, exist only as text), malloc'd;
// NULL when RocksDB has none by that name.
char* kvlab_rdb_property(kvlab_rdb_db* h, const char* name) noexcept {
  std::string value;
  if (!h->db->GetProperty(h->cf, name, &value)) {
    return nullptr;
  }
  return copy_string(value);
}

kvlab_rdb_session* kvlab_rdb_session_new(kvlab_rdb_db* h, bool wal, bool sync,
                                         bool verify_checksums, int perf_level) noexcept {
  auto* s = new kvlab_rdb_session();
  s->db = h->db;
  s->perf_level = perf_level;
  s->cf = h->cf;
  s->write.disableWAL = !wal;
  s->write.sync = sync;
  s->read.verify_checksums = verify_checksums;
  return s;
}

void kvlab_rdb_session_free(kvlab_rdb_session* s) noexcept { delete s; }

// RocksDB's perf level of the calling thread (GetPerfLevel), for tests.
int kvlab_rdb_thread_perf_level() noexcept { return static_cast<int>(rocksdb::GetPerfLevel()); }

namespace {

// Sets the session's perf level on the calling thread, once per thread. db_bench does
// the same in each of its threads (SetPerfLevel(FLAGS_perf_level), default kDisable;
// tools/db_bench_tool.cc ThreadBody): at RocksDB's own default, kEnableCount, every key
// comparison also counts into the thread's PerfContext.
inline void use_perf_level(const kvlab_rdb_session* s) noexcept {
  if (thread_perf_level != s->perf_level) {
    rocksdb::SetPerfLevel(static_cast<rocksdb::PerfLevel>(s->perf_level));
    thread_perf_level = s->perf_level;
  }
}

}  // namespace

// Looks a key up: 1 and the value (valid until the session's next call) when found, 0
// when not, -1 with *err on failure.
int kvlab_rdb_get(kvlab_rdb_session* s, const char* key, size_t key_len, const char** value,
                  size_t* value_len, char** err) noexcept {
  use_perf_level(s);
  s->value.Reset();
  rocksdb::Status st = s->db->Get(s->read, s->cf, rocksdb::Slice(key, key_len), &s->value);
  if (st.ok()) {
    *value = s->value.data();
    *value_len = s->value.size();
    return 1;
  }
  if (st.IsNotFound()) {
    return 0;
  }
  return fail(st, err);
}

// Looks n keys up in one batched DB::MultiGet (as db_bench's multireadrandom does): for
// each key i, found[i] is 1 with values[i] and value_lens[i] set (valid until the
// session's next call), 0 when not found, -1 on failure (the first failure's text in
// *err).
void kvlab_rdb_multi_get(kvlab_rdb_session* s, size_t n, const char* const* keys,
                         const size_t* key_lens, const char** values, size_t* value_lens,
                         int* found, char** err) noexcept {
  use_perf_level(s);
  if (s->values.size() < n) {
    s->keys.resize(n);
    s->values.resize(n);
    s->statuses.resize(n);
  }
  for (size_t i = 0; i < n; i++) {
    s->keys[i] = rocksdb::Slice(keys[i], key_lens[i]);
    s->values[i].Reset();
  }
  s->db->MultiGet(s->read, s->cf, n, s->keys.data(), s->values.data(), s->statuses.data());
  for (size_t i = 0; i < n; i++) {
    const rocksdb::Status& st = s->statuses[i];
    if (st.ok()) {
      found[i] = 1;
      values[i] = s->values[i].data();
      value_lens[i] = s->values[i].size();
    } else if (st.IsNotFound()) {
      found[i] = 0;
    } else {
      found[i] = -1;
      if (*err == nullptr) {
        fail(st, err);
      }
    }
  }
}

// Writes one entry through the session's reused batch, as db_bench's DoWrite does.
int kvlab_rdb_put(kvlab_rdb_session* s, const char* key, size_t key_len, const char* value,
                  size_t value_len, char** err) noexcept {
  use_perf_level(s);
  s->batch.Clear();
  rocksdb::Status st =
      s->batch.Put(s->cf, rocksdb::Slice(key, key_len), rocksdb::Slice(value, value_len));
  if (st.ok()) {
    st = s->db->Write(s->write, &s->batch);
  }
  return fail(st, err);
}

// A merge operand for the database's merge operator, through the reused batch.
int kvlab_rdb_merge(kvlab_rdb_session* s, const char* key, size_t key_len,
                    const char* operand, size_t operand_len, char** err) noexcept {
  use_perf_level(s);
  s->batch.Clear();
  rocksdb::Status st = s->batch.Merge(s->cf, rocksdb::Slice(key, key_len),
                                      rocksdb::Slice(operand, operand_len));
  if (st.ok()) {
    st = s->db->Write(s->write, &s->batch);
  }
  return fail(st, err);
}

int kvlab_rdb_delete(kvlab_rdb_session* s, const char* key, size_t key_len,
                     char** err) noexcept {
  use_perf_level(s);
  s->batch.Clear();
  rocksdb::Status st = s->batch.Delete(s->cf, rocksdb::Slice(key, key_len));
  if (st.ok()) {
    st = s->db->Write(s->write, &s->batch);
  }
  return fail(st, err);
}

// A forward iterator with the session's checksum setting.
kvlab_rdb_iter* kvlab_rdb_iter_new(kvlab_rdb_session* s) noexcept {
  use_perf_level(s);
  rocksdb::ReadOptions read;
  read.verify_checksums = s->read.verify_checksums;
  return new kvlab_rdb_iter{s->db->NewIterator(read, s->cf)};
}

void kvlab_rdb_iter_seek(kvlab_rdb_iter* i, const char* key, size_t key_len) noexcept {
  i->it->Seek(rocksdb::Slice(key, key_len));
}

bool kvlab_rdb_iter_valid(const kvlab_rdb_iter* i) noexcept { return i->it->Valid(); }

void kvlab_rdb_iter_next(kvlab_rdb_iter* i) noexcept { i->it->Next(); }

// The current value, valid until the iterator moves.
void kvlab_rdb_iter_value(const kvlab_rdb_iter* i, const char** value,
                          size_t* value_len) noexcept {
  rocksdb::Slice v = i->it->value();
  *value = v.data();
  *value_len = v.size();
}

// The current key, valid until the iterator moves.
void kvlab_rdb_iter_key(const kvlab_rdb_iter* i, const char** key, size_t* key_len) noexcept {
  rocksdb::Slice k = i->it->key();
  *key = k.data();
  *key_len = k.size();
}

int kvlab_rdb_iter_status(const kvlab_rdb_iter* i, char** err) noexcept {
  return fail(i->it->status(), err);
}

void kvlab_rdb_iter_free(kvlab_rdb_iter* i) noexcept {
  if (i != nullptr) {
    delete i->it;
    delete i;
  }
}

}  // extern "C"
