// SPDX-License-Identifier: GPL-2.0

//! A device's configuration: what the attributes set before `disksize` and the storage is made
//! with (the device keeps it under its configuration mutex, `device.rs`).

use crate::state::MAX_PRIO;
use kernel::{
    block::bdev::BdevClaim,
    compress::{Algorithm, Params},
};

/// The algorithm of a new or reset device, as zram's default.
pub(crate) const DEFAULT_ALGORITHM: Algorithm = Algorithm::LzoRle;

/// What the next `disksize` will use: the algorithms by priority (0, the primary one, always
/// set; 1 to 3 the secondary ones of `recomp_algorithm`) and their parameters; the backing device
/// and whether pages are written back compressed.
pub(crate) struct Config {
    pub(crate) algs: [Option<Algorithm>; MAX_PRIO],
    pub(crate) params: [Params; MAX_PRIO],
    /// The backing device of `backing_dev`, opened exclusively: the claim goes with the
    /// configuration (a reset gives the device up before it returns, as zram's does).
    pub(crate) backing: Option<BdevClaim>,
    /// `compressed_writeback`.
    pub(crate) compressed_writeback: bool,
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
