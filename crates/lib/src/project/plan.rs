//! Which files a map shows, in which order (docs/project.md#order): the files of the
//! ASDF systems first, in load order, then the other Lisp files in path order; each file
//! once, told by its identity (device and inode), not by its name.
//!
//! Listing and reading go through the guard; this module only orders names.

use super::asdf;
use crate::cancel::CancelToken;
use crate::features::Features;
use crate::guard::{Directory, Guard, Skipped, WalkedFile, MAX_WALKED_FILES};
use crate::view::is_lisp_path;
use std::collections::HashSet;

/// The files of a map, in map order, and what could not be listed.
#[derive(Debug, Default)]
pub struct Plan {
    pub files: Vec<WalkedFile>,
    pub skipped: Vec<Skipped>,
    /// The walk stopped at [`crate::guard::MAX_WALKED_FILES`].
    pub stopped_at_limit: bool,
    /// The walk's notes on its other bounds ([`crate::guard::Walk::notes`]).
    pub notes: Vec<String>,
    /// Systems read from `.asd` files, in order (`cl-ppcre`, `cl-ppcre/test`).
    pub systems: Vec<String>,
}

/// Files seen so far: identities, and the names of those without one (missing files,
/// reported when read).
#[derive(Default)]
struct Seen {
    ids: HashSet<(u64, u64)>,
    names: HashSet<String>,
}

impl Seen {
    /// Whether `file` is new (and remembers it).
    fn first(&mut self, guard: &Guard, file: &WalkedFile) -> bool {
        match guard.identity(file) {
            Some(id) => self.ids.insert(id),
            None => self.names.insert(file.display_path.clone()),
        }
    }
}

/// Whether a relative path names an `.asd` file.
pub fn is_asd(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("asd"))
}

/// The map of a directory: the systems of the `.asd` files at its top level (a system
/// after the local systems its `:depends-on` names, else in `.asd` path order and written
/// order; each `.asd` file before its first system's files), then the other Lisp files in
/// path order.
pub fn directory(
    guard: &Guard,
    directory: &Directory,
    features: Option<&Features>,
    cancel: &CancelToken,
) -> Plan {
    let walk = guard.walk_cancellable(directory, &is_lisp_path, cancel);
    let mut plan = Plan {
        skipped: walk.skipped,
        stopped_at_limit: walk.stopped_at_limit,
        notes: walk.notes,
        ..Plan::default()
    };
    let mut systems: Vec<(&WalkedFile, asdf::System)> = Vec::new();
    // Components read so far: past the most a plan holds, the other `.asd` files could
    // add nothing, and reading them would only cost time and memory.
    let mut components = 0usize;
    for asd in walk
        .files
        .iter()
        .filter(|f| !f.relative_path.contains('/') && is_asd(&f.relative_path))
    {
        if cancel.is_cancelled() {
            return plan;
        }
        if components >= MAX_WALKED_FILES {
            plan.stopped_at_limit = true;
            break;
        }
        if let Ok(loaded) = guard.read_walked(asd) {
            let found = asdf::systems(&loaded.bytes, features);
            components += found.iter().map(|s| s.components.len()).sum::<usize>();
            systems.extend(found.into_iter().map(|s| (asd, s)));
        }
    }
    let mut seen = Seen::default();
    for i in by_dependencies(&systems) {
        if cancel.is_cancelled() {
            return plan;
        }
        let (asd, system) = &systems[i];
        add_system(guard, asd, system, &mut seen, &mut plan);
    }
    for file in walk.files {
        if plan.files.len() >= MAX_WALKED_FILES {
            plan.stopped_at_limit = true;
            break;
        }
        if seen.first(guard, &file) {
            plan.files.push(file);
        }
    }
    plan
}

/// Systems placed after the local systems they depend on: depth-first in the order
/// given, an edge back into a system being placed (a cycle) ignored.
fn by_dependencies(systems: &[(&WalkedFile, asdf::System)]) -> Vec<usize> {
    let index: std::collections::HashMap<&str, usize> = systems
        .iter()
        .enumerate()
        .rev()
        .map(|(i, (_, s))| (s.name.as_str(), i))
        .collect();
    let deps: Vec<Vec<usize>> = systems
        .iter()
        .map(|(_, s)| {
            s.depends_on
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    asdf::dependencies_first(&deps)
}

/// The map of one `.asd` file: itself, then its systems' files.
pub fn asd(guard: &Guard, asd: &WalkedFile, features: Option<&Features>) -> Plan {
    let mut plan = Plan::default();
    add_systems(guard, asd, features, &mut Seen::default(), &mut plan);
    plan
}

/// The files several paths name, in the order given, each once.
pub fn paths(guard: &Guard, files: Vec<WalkedFile>) -> Plan {
    let mut plan = Plan::default();
    let mut seen = Seen::default();
    for file in files {
        if seen.first(guard, &file) {
            plan.files.push(file);
        }
    }
    plan
}

/// Adds the `.asd` file and the files of its systems in load order. An `.asd` file the
/// guard refuses adds itself only (reading it again reports why).
fn add_systems(
    guard: &Guard,
    asd: &WalkedFile,
    features: Option<&Features>,
    seen: &mut Seen,
    plan: &mut Plan,
) {
    if seen.first(guard, asd) {
        plan.files.push(asd.clone());
    }
    let Ok(loaded) = guard.read_walked(asd) else {
        return;
    };
    for system in asdf::systems(&loaded.bytes, features) {
        add_system(guard, asd, &system, seen, plan);
    }
}

/// Adds the `.asd` file (when not yet there) and the files of one system, at most
/// [`MAX_WALKED_FILES`] in all.
fn add_system(
    guard: &Guard,
    asd: &WalkedFile,
    system: &asdf::System,
    seen: &mut Seen,
    plan: &mut Plan,
) {
    if seen.first(guard, asd) {
        plan.files.push(asd.clone());
    }
    for component in &system.components {
        if plan.files.len() >= MAX_WALKED_FILES {
            plan.stopped_at_limit = true;
            return;
        }
        let file = guard.sibling(asd, &component.file);
        if seen.first(guard, &file) {
            plan.files.push(file);
        }
    }
    plan.systems.push(system.name.clone());
}
