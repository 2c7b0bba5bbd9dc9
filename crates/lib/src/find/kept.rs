//! What a search works out of a kept file's bytes alone ([`crate::project::source::Memo`]),
//! so that the next search of a long-lived surface does not work it out again: the
//! file's words, which let a search for the uses or callers of a symbol skip a file that
//! cannot hold one, and the packages the file defines, which every file of the scope
//! gives. A skipped file's answer is the one its search would give: no entry, and its
//! packages.

use super::{FileAnswer, Search, Target};
use crate::guard::LoadedFile;
use crate::model::packages::{read_file, PackageDef};
use crate::project::source::Memo;
use crate::project::words::{words, words_answer_for, NameSet};
use std::collections::HashSet;

/// The words of the file, and whether it is ASCII: a non-ASCII token may fold to the
/// name by Unicode rules the words (ASCII-lowercased) do not follow.
struct Words {
    set: NameSet,
    ascii: bool,
}

/// The packages the file defines, read with every branch of `#+`/`#-`.
struct Packages(Vec<PackageDef>);

/// The hashes of the names a file must hold one of not to be skipped: the symbol's and,
/// for its callers, the names of the macros that may write its call (thousands, in a
/// project of many writers); `None` when one of them cannot be told by words.
pub(crate) struct Names(Option<HashSet<u64>>);

impl Names {
    fn of(search: &Search) -> Names {
        let query = match &search.target {
            Target::Symbol(query) | Target::Callers(query) => query,
            _ => return Names(None),
        };
        // A caller may call the symbol through one of the project's macros.
        let mut names = vec![query.name.as_str()];
        if let Target::Callers(_) = &search.target {
            names.extend(search.through.names());
        }
        if !names.iter().all(|n| words_answer_for(n)) {
            return Names(None);
        }
        Names(Some(
            names.iter().map(|n| NameSet::hash(n.as_bytes())).collect(),
        ))
    }

    /// Whether `words` may hold one of the names: the smaller side is looked up in the
    /// other, so a file costs at most its own words, however many names.
    fn any_in(names: &HashSet<u64>, words: &NameSet) -> bool {
        if names.len() <= words.hashes().len() {
            names.iter().any(|&h| words.may_hold_hash(h))
        } else {
            words.hashes().iter().any(|h| names.contains(h))
        }
    }
}

/// The answer of a file that cannot hold what `search` looks for (by its words), or
/// `None` when it may (it is then searched).
pub(crate) fn skipped(file: &LoadedFile, memo: &Memo, search: &Search) -> Option<FileAnswer> {
    let answer = match &search.target {
        Target::Symbol(_) => FileAnswer::references(Vec::new(), false),
        Target::Callers(_) => FileAnswer::definitions(Vec::new(), false),
        _ => return None,
    };
    let names = search
        .kept_names
        .get_or_init(|| Names::of(search))
        .0
        .as_ref()?;
    let words = memo.get(|| Words {
        set: words(&file.bytes),
        ascii: file.bytes.is_ascii(),
    });
    if !words.ascii || Names::any_in(names, &words.set) {
        return None;
    }
    let mut answer = answer;
    answer.packages = packages(file, memo, search);
    Some(answer)
}

/// The packages a file without entries gives ([`super::packages::of_file`]): kept when
/// the search reads every branch, read again under features.
fn packages(file: &LoadedFile, memo: &Memo, search: &Search) -> Vec<PackageDef> {
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    if search.features.is_some() {
        return read_file(&file.bytes, &reads, 0).definitions;
    }
    let kept = memo.get(|| Packages(read_file(&file.bytes, &reads, 0).definitions));
    kept.0.clone()
}
