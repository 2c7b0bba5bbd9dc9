//! Integer arithmetic on the reader's data: a number is an atom as written (`16`, `-3`,
//! `#b10111`, `#x1F`, `#8r17`), computed as `i128` with every operation checked (an
//! overflow is unknown, never a wrap) and printed back in decimal. Byte specifiers
//! (`(byte size position)`) are the pair `(size . position)`, as SBCL makes them.

use super::super::datum::Val;
use compact_str::ToCompactString;

/// Magnitude past which a result is unknown: `ash` and `*` cannot grow a number without
/// bound (its text is a step's worth of bytes at most).
const MAX_MAGNITUDE: i128 = 1 << 100;

/// Whether [`call`] computes `(operator ...)`.
pub(crate) fn is_function(operator: &str) -> bool {
    matches!(
        operator,
        "+" | "-"
            | "*"
            | "1+"
            | "1-"
            | "truncate"
            | "floor"
            | "ceiling"
            | "mod"
            | "rem"
            | "="
            | "/="
            | "<"
            | ">"
            | "<="
            | ">="
            | "min"
            | "max"
            | "zerop"
            | "plusp"
            | "minusp"
            | "evenp"
            | "oddp"
            | "abs"
            | "logand"
            | "logior"
            | "logxor"
            | "lognot"
            | "ash"
            | "byte"
            | "ldb"
            | "logbitp"
            | "integerp"
            | "numberp"
    )
}

/// The integer a datum is, if it is one.
pub(crate) fn int(v: &Val) -> Option<i128> {
    let Val::Atom(text) = v else { return None };
    let lower = text.to_ascii_lowercase();
    let (radix, digits) = match lower.strip_prefix('#') {
        Some(rest) => match rest.as_bytes().first()? {
            b'b' => (2, &rest[1..]),
            b'o' => (8, &rest[1..]),
            b'x' => (16, &rest[1..]),
            _ => {
                let r = rest.find('r')?;
                (rest[..r].parse::<u32>().ok()?, &rest[r + 1..])
            }
        },
        // A trailing `.` marks a decimal integer.
        None => (10, lower.strip_suffix('.').unwrap_or(&lower)),
    };
    if !(2..=36).contains(&radix) || digits.is_empty() || digits.len() > 40 {
        return None;
    }
    let n = i128::from_str_radix(digits, radix).ok()?;
    (n.abs() <= MAX_MAGNITUDE).then_some(n)
}

/// The datum of an integer; `None` past [`MAX_MAGNITUDE`].
pub(crate) fn num(n: i128) -> Option<Val> {
    (n.abs() <= MAX_MAGNITUDE).then(|| Val::Atom(n.to_compact_string()))
}

fn boolean(b: bool) -> Val {
    Val::sym(if b { "t" } else { "nil" })
}

/// The value of `(operator args...)` on evaluated arguments; `None` when an argument is
/// not an integer or the result cannot be computed (division by zero, overflow).
pub(crate) fn call(operator: &str, args: &[Val]) -> Option<Val> {
    if matches!(operator, "integerp" | "numberp") {
        return match args {
            [Val::Unknown] => None,
            [x] => Some(boolean(int(x).is_some())),
            _ => None,
        };
    }
    let n: Vec<i128> = args.iter().map(int).collect::<Option<_>>()?;
    let one = |f: &dyn Fn(i128) -> Option<Val>| match n[..] {
        [x] => f(x),
        _ => None,
    };
    let two = |f: &dyn Fn(i128, i128) -> Option<Val>| match n[..] {
        [x, y] => f(x, y),
        _ => None,
    };
    match operator {
        "+" => num(n.iter().try_fold(0i128, |a, &b| a.checked_add(b))?),
        "*" => num(n.iter().try_fold(1i128, |a, &b| {
            let p = a.checked_mul(b)?;
            (p.abs() <= MAX_MAGNITUDE).then_some(p)
        })?),
        "-" => match n.split_first()? {
            (x, []) => num(-x),
            (x, rest) => num(rest.iter().try_fold(*x, |a, &b| a.checked_sub(b))?),
        },
        "1+" => one(&|x| num(x + 1)),
        "1-" => one(&|x| num(x - 1)),
        "abs" => one(&|x| num(x.abs())),
        "lognot" => one(&|x| num(!x)),
        "zerop" => one(&|x| Some(boolean(x == 0))),
        "plusp" => one(&|x| Some(boolean(x > 0))),
        "minusp" => one(&|x| Some(boolean(x < 0))),
        "evenp" => one(&|x| Some(boolean(x % 2 == 0))),
        "oddp" => one(&|x| Some(boolean(x % 2 != 0))),
        "truncate" | "floor" | "ceiling" | "mod" | "rem" => divide(operator, &n),
        "=" | "/=" | "<" | ">" | "<=" | ">=" => compare(operator, &n),
        "min" => num(*n.iter().min()?),
        "max" => num(*n.iter().max()?),
        "logand" => num(n.iter().fold(-1, |a, &b| a & b)),
        "logior" => num(n.iter().fold(0, |a, &b| a | b)),
        "logxor" => num(n.iter().fold(0, |a, &b| a ^ b)),
        "ash" => two(&|x, s| {
            if s >= 0 {
                let s = u32::try_from(s).ok().filter(|&s| s < 101)?;
                num(x.checked_mul(1i128 << s)?)
            } else {
                num(x >> (-s).min(127))
            }
        }),
        "logbitp" => two(&|i, x| Some(boolean(i >= 0 && (x >> i.min(127)) & 1 == 1))),
        "byte" => two(&|size, position| {
            (size >= 0 && position >= 0).then(|| {
                Val::Dotted(
                    vec![Val::Atom(size.to_compact_string())],
                    Box::new(Val::Atom(position.to_compact_string())),
                )
            })
        }),
        _ => None,
    }
}

/// `(ldb (byte size position) n)`: the spec is not an integer, so it is taken apart here.
pub(crate) fn ldb(spec: &Val, n: &Val) -> Option<Val> {
    let Val::Dotted(items, position) = spec else {
        return None;
    };
    let size = int(items.first()?)?.min(127);
    let position = int(position)?.min(127);
    let n = int(n)?;
    // In u128: `(1i128 << 127) - 1` overflows (a panic where overflow is checked).
    let mask = (1u128 << size) - 1;
    num(i128::try_from((n >> position) as u128 & mask).ok()?)
}

fn divide(operator: &str, n: &[i128]) -> Option<Val> {
    let (x, y) = match n {
        [x] => (*x, 1),
        [x, y] => (*x, *y),
        _ => return None,
    };
    if y == 0 {
        return None;
    }
    let q = x.checked_div(y)?;
    let floor = if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    };
    num(match operator {
        "truncate" => q,
        "floor" => floor,
        "ceiling" => {
            if x % y != 0 && ((x < 0) == (y < 0)) {
                q + 1
            } else {
                q
            }
        }
        "mod" => x - floor * y,
        _ => x - q * y,
    })
}

fn compare(operator: &str, n: &[i128]) -> Option<Val> {
    if n.is_empty() {
        return None;
    }
    let holds = |a: i128, b: i128| match operator {
        "=" => a == b,
        "/=" => a != b,
        "<" => a < b,
        ">" => a > b,
        "<=" => a <= b,
        _ => a >= b,
    };
    Some(boolean(n.windows(2).all(|w| holds(w[0], w[1]))))
}
