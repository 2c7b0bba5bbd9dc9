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

/// The words of the file, and whether it is ASCII: a non-ASCII token may fold to the
/// name by Unicode rules the words (ASCII-lowercased) do not follow.
struct Words {
    set: NameSet,
    ascii: bool,
}

/// The packages the file defines, read with every branch of `#+`/`#-`.
struct Packages(Vec<PackageDef>);

/// The answer of a file that cannot hold what `search` looks for (by its words), or
/// `None` when it may (it is then searched).
pub(crate) fn skipped(file: &LoadedFile, memo: &Memo, search: &Search) -> Option<FileAnswer> {
    let (query, answer) = match &search.target {
        Target::Symbol(query) => (query, FileAnswer::references(Vec::new(), false)),
        Target::Callers(query) => (query, FileAnswer::definitions(Vec::new(), false)),
        _ => return None,
    };
    // A caller may call the symbol through one of the project's macros.
    let mut names = vec![query.name.as_str()];
    if let Target::Callers(_) = &search.target {
        names.extend(search.through.names());
    }
    if !names.iter().all(|n| words_answer_for(n)) {
        return None;
    }
    let words = memo.get(|| Words {
        set: words(&file.bytes),
        ascii: file.bytes.is_ascii(),
    });
    let holds = |n: &&str| words.set.may_hold(n.as_bytes());
    if !words.ascii || names.iter().any(holds) {
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
