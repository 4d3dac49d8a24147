// SPDX-License-Identifier: GPL-2.0

//! A device's configuration: what the storage is made with, set by the attributes before
//! `disksize`: the algorithms and their parameters, the backing device and `compressed_writeback`
//! (the device keeps it under its configuration mutex, `device.rs`). The limits (`mem_limit`,
//! `writeback_limit`, `writeback_batch_size`) apply to the storage as it runs and are the
//! device's own.

use crate::{args::AlgorithmParams, state::MAX_PRIO};
use kernel::{
    block::bdev::{BdevClaim, BdevFile},
    compress::{Algorithm, Params},
    error::code::*,
    prelude::*,
};

/// The algorithm of a new or reset device: zram's default, lzo-rle, or as zram's driver
/// (`CONFIG_ZRAM_DRIVER_RUST`) the one zram's configuration chose (`CONFIG_ZRAM_DEF_COMP`).
pub(crate) const DEFAULT_ALGORITHM: Algorithm = if !cfg!(CONFIG_ZRAM_DRIVER_RUST) {
    Algorithm::LzoRle
} else if cfg!(CONFIG_ZRAM_DEF_COMP_LZO) {
    Algorithm::Lzo
} else if cfg!(CONFIG_ZRAM_DEF_COMP_LZ4) {
    Algorithm::Lz4
} else if cfg!(CONFIG_ZRAM_DEF_COMP_LZ4HC) {
    Algorithm::Lz4hc
} else if cfg!(CONFIG_ZRAM_DEF_COMP_ZSTD) {
    Algorithm::Zstd
} else if cfg!(CONFIG_ZRAM_DEF_COMP_DEFLATE) {
    Algorithm::Deflate
} else if cfg!(CONFIG_ZRAM_DEF_COMP_842) {
    Algorithm::Sw842
} else {
    Algorithm::LzoRle
};

/// What the next `disksize` will use: the algorithms by priority (0, the primary one, always
/// set; 1 to 3 the secondary ones of `recomp_algorithm`) and their parameters; the backing device
/// and whether pages are written back compressed.
pub(crate) struct Config {
    algs: [Option<Algorithm>; MAX_PRIO],
    params: [Params; MAX_PRIO],
    /// The backing device of `backing_dev`, opened exclusively: the claim goes with the
    /// configuration (a reset gives the device up before it returns, as zram's does).
    backing: Option<BdevClaim>,
    /// `compressed_writeback`.
    compressed_writeback: bool,
}

impl Default for Config {
    /// zram's default algorithm, with its default parameters, and no secondary ones.
    fn default() -> Self {
        Config {
            algs: [Some(DEFAULT_ALGORITHM), None, None, None],
            params: [Params::default(); MAX_PRIO],
            backing: None,
            compressed_writeback: false,
        }
    }
}

impl Config {
    /// The algorithms by priority.
    pub(crate) fn algorithms(&self) -> [Option<Algorithm>; MAX_PRIO] {
        self.algs
    }

    /// Sets the algorithm of priority `prio` (0, the primary one, to 3); `EINVAL` past that.
    pub(crate) fn set_algorithm(&mut self, prio: usize, alg: Algorithm) -> Result {
        *self.algs.get_mut(prio).ok_or(EINVAL)? = Some(alg);
        Ok(())
    }

    /// The parameters of the algorithm of priority `prio`; the defaults past the last.
    pub(crate) fn params(&self, prio: usize) -> Params {
        self.params.get(prio).copied().unwrap_or_default()
    }

    /// `algorithm_params`: sets the parameters `p` gives for the algorithm it names (see
    /// [`params_priority`](Self::params_priority)), for the next `disksize`. `EINVAL` for a
    /// priority or name that names no configured algorithm, or two different ones, and for
    /// `dict=`: zram's errno for a dictionary it cannot load, and rzram loads none yet.
    pub(crate) fn set_algorithm_params(&mut self, p: &AlgorithmParams<'_>) -> Result {
        let prio = self.params_priority(p.priority, p.algo)?;
        if p.dict.is_some() {
            pr_info!("dict=: rzram does not load compression dictionaries\n");
            return Err(EINVAL);
        }
        let params = Params {
            level: p.level,
            deflate_winbits: p.deflate_winbits,
        };
        self.set_params(prio, params)
    }

    /// The priority `algorithm_params` applies to, from its `priority=` and `algo=`: the
    /// priority given, whose algorithm must be configured, or that of the first algorithm called
    /// `algo`, or 0 without either. `EINVAL` for a priority with no algorithm, a name no
    /// algorithm has, and a priority and a name of different algorithms.
    fn params_priority(&self, priority: Option<i32>, algo: Option<&[u8]>) -> Result<usize> {
        let by_prio = match priority {
            Some(prio) => Some(
                usize::try_from(prio)
                    .ok()
                    .filter(|&i| self.algs.get(i).is_some_and(Option::is_some))
                    .ok_or(EINVAL)?,
            ),
            None => None,
        };
        let by_algo = match algo {
            Some(name) => Some(
                self.algs
                    .iter()
                    .position(|a| a.is_some_and(|a| a.name().as_bytes() == name))
                    .ok_or(EINVAL)?,
            ),
            None => None,
        };
        match (by_prio, by_algo) {
            (Some(a), Some(b)) if a != b => Err(EINVAL),
            _ => Ok(by_prio.or(by_algo).unwrap_or(0)),
        }
    }

    /// Sets the parameters of the algorithm of priority `prio`; `EINVAL` past the last.
    pub(crate) fn set_params(&mut self, prio: usize, params: Params) -> Result {
        *self.params.get_mut(prio).ok_or(EINVAL)? = params;
        Ok(())
    }

    /// The backing device, if one is set.
    pub(crate) fn backing(&self) -> Option<&BdevClaim> {
        self.backing.as_ref()
    }

    /// `backing_dev`: opens the block device at `path` (without a NUL) read-write and
    /// exclusively as the backing device, giving up the one set before. As zram: the open's error
    /// (`ENOENT`, `EBUSY` if the device is in use, ...), `ENOTBLK` for a file that is not a block
    /// device, `EINVAL` for an empty device.
    pub(crate) fn open_backing(&mut self, path: &[u8]) -> Result {
        let mut cpath = KVec::with_capacity(path.len() + 1, GFP_KERNEL)?;
        cpath.extend_from_slice(path, GFP_KERNEL)?;
        cpath.push(0, GFP_KERNEL)?;
        let cpath = CStr::from_bytes_with_nul(&cpath)?;
        let file = BdevFile::open(cpath)?;
        if file.nr_pages() == 0 {
            return Err(EINVAL);
        }
        self.set_backing(file);
        pr_info!("setup backing device {}\n", cpath);
        Ok(())
    }

    /// Sets the backing device, giving up the one set before.
    fn set_backing(&mut self, backing: BdevClaim) {
        self.backing = Some(backing);
    }

    /// Whether pages are to be written back compressed.
    pub(crate) fn compressed_writeback(&self) -> bool {
        self.compressed_writeback
    }

    /// Sets whether pages are to be written back compressed.
    pub(crate) fn set_compressed_writeback(&mut self, on: bool) {
        self.compressed_writeback = on;
    }
}
