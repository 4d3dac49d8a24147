// SPDX-License-Identifier: GPL-2.0

//! debugfs `block_state`: one line per stored page, in the format of zram's
//! (`CONFIG_ZRAM_MEMORY_TRACKING`), at `/sys/kernel/debug/<rzram or zram>/<disk>/block_state`.

use crate::{
    device::Rzram,
    state::{self, State},
};
use core::fmt::{self, Write};
use kernel::{debugfs::Records, error::code::*, prelude::*, sync::Arc};

/// The `block_state` records of a device: one per page, empty for pages not stored.
pub(crate) struct BlockState(pub(crate) Arc<Rzram>);

impl Records for BlockState {
    const OWNER: &'static ThisModule = &crate::THIS_MODULE;

    /// The device's pages; `EINVAL` if it is not initialised, as zram.
    fn count(&self) -> Result<u64> {
        let storage = self.0.storage().ok_or(EINVAL)?;
        Ok(storage.table().pages() as u64)
    }

    /// `index access-time flags`: the index (12 wide), the access time in seconds since boot
    /// with six digits of microseconds (rzram keeps seconds: they are zero), and a flag or `.`
    /// for each of `s` (same-filled), `w` (written back), `h` (huge), `i` (idle),
    /// `r` (recompressed) and `n` (incompressible).
    fn write(&self, pos: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(storage) = self.0.storage() else {
            return Ok(());
        };
        let Some(g) = usize::try_from(pos)
            .ok()
            .and_then(|i| storage.table().lock(i))
        else {
            return Ok(());
        };
        let st = State::of(&g);
        if !g.has_object() && !st.is_same() && !st.is_wb() {
            return Ok(());
        }
        let flag = |on: bool, c: char| if on { c } else { '.' };
        let flags = [
            flag(st.is_same(), 's'),
            flag(st.is_wb(), 'w'),
            flag(st.is_huge(), 'h'),
            flag(st.is_idle(), 'i'),
            flag(st.prio() != 0, 'r'),
            flag(st.is_incompressible(), 'n'),
        ];
        write!(f, "{:12} {:12}.000000 ", pos, state::access_time(&g))?;
        for c in flags {
            f.write_char(c)?;
        }
        f.write_char('\n')
    }
}
