//! The one table of store facts ([`STORES`]) and the refusals derived from it.

use crate::Refusal;

/// How a store is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// An engine in kvlab's process over a data directory (`--path`).
    Embedded,
    /// A cache (or the null store) in kvlab's process, without a data directory.
    InProcess,
    /// A server reached over the network (`--url`), or one kvlab starts (`--spawn`).
    Network,
}

impl Access {
    /// The plural noun of a kind of store, as sentences use it.
    pub fn noun(self) -> &'static str {
        match self {
            Access::Embedded => "embedded stores",
            Access::InProcess => "in-process stores",
            Access::Network => "network stores",
        }
    }
}

/// A store flag of `load`, `run`, `verify`, `replay`, `crash` and the other phase
/// commands that applies to some stores only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--path DIR`: an embedded store's data directory.
    Path,
    /// `--cache-size SIZE`: an in-process cache's capacity.
    CacheSize,
    /// `--disk-path DIR`: a hybrid cache's disk tier.
    DiskPath,
    /// `--disk-size SIZE`: a hybrid cache's disk tier's capacity.
    DiskSize,
    /// `--url URL`: a running server.
    Url,
    /// `--spawn [SETTINGS]`: a server kvlab starts.
    Spawn,
    /// `--fault SPEC`: a network fault through Toxiproxy.
    Fault,
    /// `--toxiproxy HOST:PORT`: the Toxiproxy API `--fault` goes through.
    Toxiproxy,
    /// `--timeout TIME`: the per-request timeout of a network client.
    Timeout,
    /// `--connections N` above 1: clients per thread.
    Connections,
    /// `--merge-operator NAME`: RocksDB's merge operator.
    MergeOperator,
}

impl Flag {
    /// Every flag, in the order help text lists them.
    pub const ALL: [Flag; 11] = [
        Flag::Path,
        Flag::CacheSize,
        Flag::DiskPath,
        Flag::DiskSize,
        Flag::Url,
        Flag::Spawn,
        Flag::Fault,
        Flag::Toxiproxy,
        Flag::Timeout,
        Flag::Connections,
        Flag::MergeOperator,
    ];

    /// The flag as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Path => "--path",
            Flag::CacheSize => "--cache-size",
            Flag::DiskPath => "--disk-path",
            Flag::DiskSize => "--disk-size",
            Flag::Url => "--url",
            Flag::Spawn => "--spawn",
            Flag::Fault => "--fault",
            Flag::Toxiproxy => "--toxiproxy",
            Flag::Timeout => "--timeout",
            Flag::Connections => "--connections",
            Flag::MergeOperator => "--merge-operator",
        }
    }

    /// What the flag sets, as a sentence's object ("it is …").
    fn what(self) -> &'static str {
        match self {
            Flag::Path => "the data directory of",
            Flag::CacheSize => "the capacity of",
            Flag::DiskPath | Flag::DiskSize => "the disk tier of",
            Flag::Url => "the server address of",
            Flag::Spawn => "a server kvlab starts for",
            Flag::Fault => "a network fault (through a Toxiproxy proxy) for",
            Flag::Toxiproxy => "the Toxiproxy API of --fault, for",
            Flag::Timeout => "the per-request timeout of",
            Flag::Connections => "the clients per thread of",
            Flag::MergeOperator => "the merge operator of",
        }
    }

    /// The stores this flag applies to, from [`STORES`].
    pub fn stores(self) -> impl Iterator<Item = &'static StoreInfo> {
        STORES.iter().filter(move |s| s.flags.contains(&self))
    }

    /// Who the flag is for: "embedded stores (rocksdb, lmdb, wiredtiger)" when its stores
    /// are every store of one kind, else the stores' names.
    pub fn applies_to(self) -> String {
        let names: Vec<&str> = self.stores().map(|s| s.name).collect();
        let kinds = [Access::Embedded, Access::InProcess, Access::Network];
        let whole_kind = kinds.into_iter().find(|kind| {
            let of_kind: Vec<&str> = STORES
                .iter()
                .filter(|s| s.access == *kind)
                .map(|s| s.name)
                .collect();
            of_kind == names
        });
        match (whole_kind, names.as_slice()) {
            (Some(kind), _) => format!("{} ({})", kind.noun(), names.join(", ")),
            (None, [one]) => (*one).to_string(),
            (None, _) => format!("{} ({})", "the stores", names.join(", ")),
        }
    }
}

/// The facts about one store that commands check options against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreInfo {
    /// The name `--db` takes.
    pub name: &'static str,
    /// The cargo feature of the `kvlab` binary that builds it in; `None`: always built.
    pub feature: Option<&'static str>,
    /// How it is reached.
    pub access: Access,
    /// The prefix of its `-p` options (`rocksdb.`).
    pub option_prefix: &'static str,
    /// The store flags that apply to it.
    pub flags: &'static [Flag],
    /// Whether it keeps its data when kvlab's process ends (a database loaded by `load`
    /// is there for `run` and `verify`).
    pub persistent: bool,
    /// Whether kvlab can start it (`--spawn`).
    pub spawnable: bool,
    /// Whether `kvlab crash` can test it: an embedded store's writer is killed, or the
    /// server kvlab started.
    pub crashable: bool,
    /// Whether `kvlab crash --power-loss` applies (its data lives in files kvlab can cut
    /// the power under).
    pub power_loss: bool,
    /// The eviction policy `kvlab sim --compare` sets beside it by default (libCacheSim's
    /// name), when it evicts.
    pub closest_policy: Option<&'static str>,
    /// What applies instead of a flag that does not apply to it.
    pub instead: &'static [(Flag, &'static str)],
    /// The options (without the prefix) that decide how records are laid out in the
    /// store: a recording carries them, and a replay of it on the same store takes them
    /// unless told otherwise, so that it reads what it writes (Redis' hash or string
    /// model).
    pub layout_options: &'static [&'static str],
}

const EMBEDDED_FLAGS: &[Flag] = &[Flag::Path];
const NETWORK_FLAGS: &[Flag] = &[
    Flag::Url,
    Flag::Spawn,
    Flag::Fault,
    Flag::Toxiproxy,
    Flag::Timeout,
    Flag::Connections,
];

/// Every store kvlab knows, in the order `--help` lists them.
pub const STORES: &[StoreInfo] = &[
    StoreInfo {
        name: "rocksdb",
        feature: Some("rocksdb"),
        access: Access::Embedded,
        option_prefix: "rocksdb.",
        flags: &[Flag::Path, Flag::MergeOperator],
        persistent: true,
        spawnable: false,
        crashable: true,
        power_loss: true,
        closest_policy: Some("LRU"),
        instead: &[(
            Flag::CacheSize,
            "rocksdb's block cache is -p rocksdb.block_cache_size=SIZE",
        )],
        layout_options: &["column_family"],
    },
    StoreInfo {
        name: "lmdb",
        feature: Some("lmdb"),
        access: Access::Embedded,
        option_prefix: "lmdb.",
        flags: EMBEDDED_FLAGS,
        persistent: true,
        spawnable: false,
        crashable: true,
        power_loss: true,
        closest_policy: None,
        instead: &[(Flag::CacheSize, "lmdb's map is -p lmdb.map_size=SIZE")],
        layout_options: &[],
    },
    StoreInfo {
        name: "wiredtiger",
        feature: Some("wiredtiger"),
        access: Access::Embedded,
        option_prefix: "wiredtiger.",
        flags: EMBEDDED_FLAGS,
        persistent: true,
        spawnable: false,
        crashable: true,
        power_loss: true,
        closest_policy: None,
        instead: &[(
            Flag::CacheSize,
            "wiredtiger's cache is -p wiredtiger.cache_size=SIZE",
        )],
        layout_options: &[],
    },
    StoreInfo {
        name: "moka",
        feature: Some("moka"),
        access: Access::InProcess,
        option_prefix: "moka.",
        flags: &[Flag::CacheSize],
        persistent: false,
        spawnable: false,
        crashable: false,
        power_loss: false,
        closest_policy: Some("WTinyLFU"),
        instead: &[(
            Flag::DiskPath,
            "moka has no disk tier; foyer's is --disk-path",
        )],
        layout_options: &[],
    },
    StoreInfo {
        name: "foyer",
        feature: Some("foyer"),
        access: Access::InProcess,
        option_prefix: "foyer.",
        flags: &[Flag::CacheSize, Flag::DiskPath, Flag::DiskSize],
        persistent: false,
        spawnable: false,
        crashable: false,
        power_loss: false,
        closest_policy: Some("WTinyLFU"),
        instead: &[(Flag::Path, "foyer's disk tier is --disk-path")],
        layout_options: &[],
    },
    StoreInfo {
        name: "redis",
        feature: None,
        access: Access::Network,
        option_prefix: "redis.",
        flags: NETWORK_FLAGS,
        persistent: true,
        spawnable: true,
        crashable: true,
        power_loss: true,
        closest_policy: Some("LRU"),
        instead: &[(
            Flag::CacheSize,
            "a server's memory is --spawn maxmemory=SIZE or its own configuration",
        )],
        layout_options: &["model"],
    },
    StoreInfo {
        name: "memcached",
        feature: None,
        access: Access::Network,
        option_prefix: "memcached.",
        flags: NETWORK_FLAGS,
        persistent: false,
        spawnable: true,
        crashable: true,
        power_loss: false,
        closest_policy: Some("SLRU"),
        instead: &[(
            Flag::CacheSize,
            "a server's memory is --spawn m=MEGABYTES or its own configuration",
        )],
        layout_options: &[],
    },
    StoreInfo {
        name: "null",
        feature: None,
        access: Access::InProcess,
        option_prefix: "null.",
        flags: &[],
        persistent: false,
        spawnable: false,
        crashable: false,
        power_loss: false,
        closest_policy: None,
        instead: &[],
        layout_options: &[],
    },
];

impl StoreInfo {
    /// The row of the store `--db` names, if kvlab knows it.
    pub fn find(name: &str) -> Option<&'static StoreInfo> {
        STORES.iter().find(|s| s.name == name)
    }

    /// Whether `flag` applies to this store.
    pub fn takes(&self, flag: Flag) -> bool {
        self.flags.contains(&flag)
    }

    /// `Ok` when `flag` applies to this store, else the one sentence that refuses it,
    /// naming what applies instead where the store has something of the kind.
    pub fn check(&self, flag: Flag) -> Result<(), Refusal> {
        self.check_as(flag, flag.name())
    }

    /// [`check`](Self::check), with the flag spelled as it was given (`--connections 2`).
    pub fn check_as(&self, flag: Flag, given: &str) -> Result<(), Refusal> {
        if self.takes(flag) {
            return Ok(());
        }
        let instead = self
            .instead
            .iter()
            .find(|(f, _)| *f == flag)
            .map_or(String::new(), |(_, hint)| format!("; {hint}"));
        Err(Refusal(format!(
            "{given} does not apply to --db {}: it is {} {}{instead}",
            self.name,
            flag.what(),
            flag.applies_to()
        )))
    }

    /// `Ok` when the `-p` option `name` is this store's or no store's; the sentence that
    /// refuses another store's option (which this store would ignore).
    pub fn check_option(&self, name: &str) -> Result<(), Refusal> {
        if name.starts_with(self.option_prefix) {
            return Ok(());
        }
        match STORES.iter().find(|s| name.starts_with(s.option_prefix)) {
            Some(other) => Err(Refusal(format!(
                "option `{name}` is for --db {}, not --db {}; options of {} start with `{}`",
                other.name, self.name, self.name, self.option_prefix
            ))),
            None => Ok(()),
        }
    }

    /// The names of the stores `kvlab crash` can test, for its help and refusal.
    pub fn crashable_names() -> Vec<&'static str> {
        STORES
            .iter()
            .filter(|s| s.crashable)
            .map(|s| s.name)
            .collect()
    }
}

/// Every store's option prefix ([`StoreInfo::option_prefix`]), in table order: the
/// property names a workload leaves to the store.
pub const OPTION_PREFIXES: [&str; STORES.len()] = {
    let mut prefixes = [""; STORES.len()];
    let mut i = 0;
    while i < STORES.len() {
        prefixes[i] = STORES[i].option_prefix;
        i += 1;
    }
    prefixes
};

/// Whether a `-p` option belongs to a store (its name starts with a store's prefix).
pub fn is_store_option(name: &str) -> bool {
    STORES.iter().any(|s| name.starts_with(s.option_prefix))
}
