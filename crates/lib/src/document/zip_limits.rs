//! A ZIP archive read as hostile: entries counted, each entry's declared size, actual size
//! (read through `take(limit + 1)`, never trusting the header) and compression ratio
//! checked, and a budget for all the bytes inflated. A ZIP bomb is refused, not expanded.

use super::Budget;
use crate::error::ToolError;
use std::io::{Cursor, Read};
use zip::ZipArchive;

/// An entry's ratio is checked only above this size: small files may compress well.
const RATIO_FLOOR: u64 = 1024 * 1024;

/// An archive being read, with the bytes inflated so far.
pub(super) struct Archive<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    inflated: u64,
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as a ZIP archive (`what`: the format, for messages).
    pub(super) fn open(
        bytes: &'a [u8],
        what: &str,
        budget: &Budget,
    ) -> Result<Archive<'a>, ToolError> {
        if !bytes.starts_with(b"PK\x03\x04") {
            return Err(budget.refuse(format!(
                "it is not a ZIP archive, and a {what} file is one (it may be an older .doc, \
                 or damaged)"
            )));
        }
        let zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| budget.refuse(format!("it is not a readable ZIP archive ({e})")))?;
        if zip.len() > budget.limits.max_entries {
            return Err(budget.over_limit(format!(
                "its ZIP archive has {} entries, over the limit of {}",
                zip.len(),
                budget.limits.max_entries
            )));
        }
        Ok(Archive { zip, inflated: 0 })
    }

    /// The inflated bytes of entry `name`; `None` when there is no such entry.
    pub(super) fn read(
        &mut self,
        name: &str,
        budget: &Budget,
    ) -> Result<Option<Vec<u8>>, ToolError> {
        budget.check()?;
        let limits = budget.limits;
        let mut entry = match self.zip.by_name(name) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(budget.refuse(format!("its entry {name} cannot be read ({e})"))),
        };
        let declared = entry.size();
        let packed = entry.compressed_size().max(1);
        let left = limits.max_total_bytes.saturating_sub(self.inflated);
        let cap = limits.max_entry_bytes.min(left);
        let bomb = |size: String| {
            budget.over_limit(format!(
                "its entry {name} inflates to {size}, over the {} (a ZIP bomb is refused, not \
                 expanded)",
                if cap < limits.max_entry_bytes {
                    format!("{}-byte limit for all entries", limits.max_total_bytes)
                } else {
                    format!("{}-byte limit for one entry", limits.max_entry_bytes)
                }
            ))
        };
        if declared > cap {
            return Err(bomb(format!("{declared} bytes (as declared)")));
        }
        if declared > RATIO_FLOOR && declared / packed > limits.max_ratio {
            return Err(budget.over_limit(format!(
                "its entry {name} is compressed {} to 1, over the limit of {} to 1 (a ZIP \
                 bomb is refused, not expanded)",
                declared / packed,
                limits.max_ratio
            )));
        }
        let mut out = Vec::with_capacity(usize::try_from(declared.min(cap)).unwrap_or(0));
        (&mut entry)
            .take(cap.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| budget.refuse(format!("its entry {name} cannot be inflated ({e})")))?;
        if out.len() as u64 > cap {
            return Err(bomb(format!("more than {cap} bytes (declared {declared})")));
        }
        self.inflated += out.len() as u64;
        Ok(Some(out))
    }
}
