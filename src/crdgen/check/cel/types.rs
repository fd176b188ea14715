//! CEL types and the functions a CRD rule may call, with their overloads as kube-apiserver 1.36
//! declares them to cel-go (the standard library; the strings (v2), sets, lists (v3), optional and
//! two-variable comprehension extensions; Kubernetes' URL, regex, list, quantity, IP, CIDR,
//! format and semver libraries), and overload resolution as cel-go's checker does it: type
//! parameters, `dyn` assignable both ways, a union of the overloads a `dyn` argument leaves open.
//! `math`, `base64` and `cel.bind` are not declared for CRD rules, so they are not here.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use super::decl::{Decl, Prim};

#[derive(Debug, Clone)]
pub(in crate::crdgen) enum Ty<'d> {
    P(Prim),
    List(Box<Ty<'d>>),
    Map(Box<Ty<'d>>, Box<Ty<'d>>),
    /// An object of the schema (cel-go names each one after its path: two are one type only if
    /// they are one node).
    Object(&'d Decl),
    /// `optional_type`, `net.IP`, `kubernetes.Quantity`...
    Opaque(&'static str, Vec<Ty<'d>>),
    /// A type value (`int` in `type(x) == int`).
    Type(Box<Ty<'d>>),
    /// A type parameter of a signature.
    Param(u8),
    /// The type of an expression that did not check (assignable anywhere, to report one error).
    Error,
}

pub(in crate::crdgen) const DYN: Ty<'static> = Ty::P(Prim::Dyn);
pub(in crate::crdgen) const OPTIONAL: &str = "optional_type";

impl<'d> Ty<'d> {
    pub fn is_dyn(&self) -> bool {
        matches!(self, Ty::P(Prim::Dyn) | Ty::Error)
    }

    pub fn optional(t: Ty<'d>) -> Ty<'d> {
        Ty::Opaque(OPTIONAL, vec![t])
    }

    /// The first type parameter (the element of a list, the key of a map, the value of an
    /// optional).
    pub fn param(&self) -> Option<&Ty<'d>> {
        match self {
            Ty::List(e) | Ty::Map(e, _) | Ty::Type(e) => Some(e),
            Ty::Opaque(_, ps) => ps.first(),
            _ => None,
        }
    }

    /// `isScalar` of cel-go's cost estimator: a value of constant size.
    pub fn is_scalar(&self) -> bool {
        match self {
            Ty::P(p) => matches!(
                p,
                Prim::Bool
                    | Prim::Double
                    | Prim::Duration
                    | Prim::Int
                    | Prim::Timestamp
                    | Prim::Uint
            ),
            Ty::Opaque(OPTIONAL, ps) => ps.first().is_some_and(Ty::is_scalar),
            _ => false,
        }
    }

    /// The same type, exactly (objects by identity).
    pub fn same(&self, other: &Ty<'_>) -> bool {
        match (self, other) {
            (Ty::P(a), Ty::P(b)) => a == b,
            (Ty::List(a), Ty::List(b)) | (Ty::Type(a), Ty::Type(b)) => a.same(b),
            (Ty::Map(a, b), Ty::Map(c, d)) => a.same(c) && b.same(d),
            (Ty::Object(a), Ty::Object(b)) => std::ptr::eq(*a, *b as *const Decl),
            (Ty::Opaque(a, x), Ty::Opaque(b, y)) => {
                a == b && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same(q))
            }
            (Ty::Param(a), Ty::Param(b)) => a == b,
            (Ty::Error, Ty::Error) => true,
            _ => false,
        }
    }

    fn subst(&self, s: &HashMap<u8, Ty<'d>>) -> Ty<'d> {
        match self {
            Ty::Param(p) => s.get(p).cloned().unwrap_or(DYN),
            Ty::List(e) => Ty::List(Box::new(e.subst(s))),
            Ty::Map(k, v) => Ty::Map(Box::new(k.subst(s)), Box::new(v.subst(s))),
            Ty::Type(e) => Ty::Type(Box::new(e.subst(s))),
            Ty::Opaque(n, ps) => Ty::Opaque(n, ps.iter().map(|p| p.subst(s)).collect()),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Ty<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::P(p) => f.write_str(match p {
                Prim::Bool => "bool",
                Prim::Int => "int",
                Prim::Uint => "uint",
                Prim::Double => "double",
                Prim::String => "string",
                Prim::Bytes => "bytes",
                Prim::Null => "null_type",
                Prim::Duration => "google.protobuf.Duration",
                Prim::Timestamp => "google.protobuf.Timestamp",
                Prim::Dyn => "dyn",
            }),
            Ty::List(e) => write!(f, "list({e})"),
            Ty::Map(k, v) => write!(f, "map({k}, {v})"),
            Ty::Object(_) => f.write_str("object"),
            Ty::Opaque(n, ps) if ps.is_empty() => f.write_str(n),
            Ty::Opaque(n, ps) => {
                write!(f, "{n}(")?;
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str(")")
            }
            Ty::Type(t) => write!(f, "type({t})"),
            Ty::Param(p) => write!(f, "_var{p}"),
            Ty::Error => f.write_str("*error*"),
        }
    }
}

/// Whether a value of `actual` can be passed where `sig` is declared, binding type parameters.
fn assignable<'d>(sig: &Ty<'static>, actual: &Ty<'d>, s: &mut HashMap<u8, Ty<'d>>) -> bool {
    if actual.is_dyn() {
        if let Ty::Param(p) = sig {
            s.entry(*p).or_insert(DYN);
        }
        return true;
    }
    match (sig, actual) {
        (Ty::P(Prim::Dyn), _) => true,
        (Ty::Param(p), _) => match s.get(p).cloned() {
            None => {
                s.insert(*p, actual.clone());
                true
            }
            Some(bound) if bound.is_dyn() => {
                s.insert(*p, actual.clone());
                true
            }
            Some(bound) => compatible(&bound, actual),
        },
        // A null is a value of any object (message) type and of itself.
        (Ty::P(Prim::Null), Ty::P(Prim::Null)) => true,
        (Ty::P(a), Ty::P(b)) => a == b,
        (Ty::List(a), Ty::List(b)) => assignable(a, b, s),
        (Ty::Map(a, b), Ty::Map(c, d)) => assignable(a, c, s) && assignable(b, d, s),
        (Ty::Opaque(a, x), Ty::Opaque(b, y)) => {
            a == b && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| assignable(p, q, s))
        }
        (Ty::Type(_), Ty::Type(_)) => true,
        _ => false,
    }
}

/// Two bound types that agree (either may be dyn, inside lists and maps too; null agrees with
/// an object and an optional).
fn compatible(a: &Ty<'_>, b: &Ty<'_>) -> bool {
    if a.is_dyn() || b.is_dyn() {
        return true;
    }
    match (a, b) {
        (Ty::List(x), Ty::List(y)) => compatible(x, y),
        // Type values compare whatever types they stand for (`type(self) == map`).
        (Ty::Type(_), Ty::Type(_)) => true,
        (Ty::Map(k, v), Ty::Map(l, w)) => compatible(k, l) && compatible(v, w),
        (Ty::Object(_) | Ty::Opaque(OPTIONAL, _), Ty::P(Prim::Null))
        | (Ty::P(Prim::Null), Ty::Object(_) | Ty::Opaque(OPTIONAL, _)) => true,
        (Ty::Opaque(n, x), Ty::Opaque(m, y)) => {
            n == m && x.len() == y.len() && x.iter().zip(y).all(|(p, q)| compatible(p, q))
        }
        _ => a.same(b),
    }
}

/// One overload: a function name, whether it is called as `target.f(..)`, the parameter types
/// (the target first), the result, and cel-go's overload id (which the cost estimator keys on).
pub(in crate::crdgen) struct Overload {
    pub name: &'static str,
    pub member: bool,
    pub params: Vec<Ty<'static>>,
    pub result: Ty<'static>,
    pub id: String,
}

/// `name m|g id: params -> result`, one a line; `A`, `B` are type parameters.
const TABLE: &str = "
!_ g logical_not: bool -> bool
-_ g negate_int64: int -> int
-_ g negate_double: double -> double
_&&_ g logical_and: bool, bool -> bool
_||_ g logical_or: bool, bool -> bool
_?_:_ g conditional: bool, A, A -> A
_==_ g equals: A, A -> bool
_!=_ g not_equals: A, A -> bool
@not_strictly_false g not_strictly_false: bool -> bool
_+_ g add_int64: int, int -> int
_+_ g add_uint64: uint, uint -> uint
_+_ g add_double: double, double -> double
_+_ g add_string: string, string -> string
_+_ g add_bytes: bytes, bytes -> bytes
_+_ g add_list: list(A), list(A) -> list(A)
_+_ g add_timestamp_duration: timestamp, duration -> timestamp
_+_ g add_duration_timestamp: duration, timestamp -> timestamp
_+_ g add_duration_duration: duration, duration -> duration
_-_ g subtract_int64: int, int -> int
_-_ g subtract_uint64: uint, uint -> uint
_-_ g subtract_double: double, double -> double
_-_ g subtract_timestamp_timestamp: timestamp, timestamp -> duration
_-_ g subtract_timestamp_duration: timestamp, duration -> timestamp
_-_ g subtract_duration_duration: duration, duration -> duration
_*_ g multiply_int64: int, int -> int
_*_ g multiply_uint64: uint, uint -> uint
_*_ g multiply_double: double, double -> double
_/_ g divide_int64: int, int -> int
_/_ g divide_uint64: uint, uint -> uint
_/_ g divide_double: double, double -> double
_%_ g modulo_int64: int, int -> int
_%_ g modulo_uint64: uint, uint -> uint
_[_] g index_list: list(A), int -> A
_[_] g index_map: map(A, B), A -> B
_[?_] g list_optindex_optional_int: list(A), int -> optional(A)
_[?_] g map_optindex_optional_value: map(A, B), A -> optional(B)
_[?_] g optional_list_optindex_optional_int: optional(list(A)), int -> optional(A)
_[?_] g optional_map_optindex_optional_value: optional(map(A, B)), A -> optional(B)
_[_] g optional_list_index_int: optional(list(A)), int -> optional(A)
_[_] g optional_map_index_value: optional(map(A, B)), A -> optional(B)
@in g in_list: A, list(A) -> bool
@in g in_map: A, map(A, B) -> bool
size g size_string: string -> int
size g size_bytes: bytes -> int
size g size_list: list(A) -> int
size g size_map: map(A, B) -> int
size m string_size: string -> int
size m bytes_size: bytes -> int
size m list_size: list(A) -> int
size m map_size: map(A, B) -> int
contains m contains_string: string, string -> bool
startsWith m starts_with_string: string, string -> bool
endsWith m ends_with_string: string, string -> bool
matches g matches: string, string -> bool
matches m matches_string: string, string -> bool
int g int64_to_int64: int -> int
int g uint64_to_int64: uint -> int
int g double_to_int64: double -> int
int g string_to_int64: string -> int
int g timestamp_to_int64: timestamp -> int
int g duration_to_int64: duration -> int
uint g uint64_to_uint64: uint -> uint
uint g int64_to_uint64: int -> uint
uint g double_to_uint64: double -> uint
uint g string_to_uint64: string -> uint
double g double_to_double: double -> double
double g int64_to_double: int -> double
double g uint64_to_double: uint -> double
double g string_to_double: string -> double
string g string_to_string: string -> string
string g int64_to_string: int -> string
string g uint64_to_string: uint -> string
string g double_to_string: double -> string
string g bytes_to_string: bytes -> string
string g bool_to_string: bool -> string
string g timestamp_to_string: timestamp -> string
string g duration_to_string: duration -> string
string g ip_to_string: IP -> string
string g cidr_to_string: CIDR -> string
bytes g bytes_to_bytes: bytes -> bytes
bytes g string_to_bytes: string -> bytes
bool g bool_to_bool: bool -> bool
bool g string_to_bool: string -> bool
duration g duration_to_duration: duration -> duration
duration g string_to_duration: string -> duration
timestamp g timestamp_to_timestamp: timestamp -> timestamp
timestamp g string_to_timestamp: string -> timestamp
timestamp g int64_to_timestamp: int -> timestamp
dyn g to_dyn: A -> dyn
type g type: A -> type(A)
getFullYear m timestamp_to_year: timestamp -> int
getFullYear m timestamp_to_year_with_tz: timestamp, string -> int
getMonth m timestamp_to_month: timestamp -> int
getMonth m timestamp_to_month_with_tz: timestamp, string -> int
getDayOfYear m timestamp_to_day_of_year: timestamp -> int
getDayOfYear m timestamp_to_day_of_year_with_tz: timestamp, string -> int
getDayOfMonth m timestamp_to_day_of_month_zero_based: timestamp -> int
getDayOfMonth m timestamp_to_day_of_month_zero_based_with_tz: timestamp, string -> int
getDate m timestamp_to_day_of_month_one_based: timestamp -> int
getDate m timestamp_to_day_of_month_one_based_with_tz: timestamp, string -> int
getDayOfWeek m timestamp_to_day_of_week: timestamp -> int
getDayOfWeek m timestamp_to_day_of_week_with_tz: timestamp, string -> int
getHours m timestamp_to_hours: timestamp -> int
getHours m timestamp_to_hours_with_tz: timestamp, string -> int
getHours m duration_to_hours: duration -> int
getMinutes m timestamp_to_minutes: timestamp -> int
getMinutes m timestamp_to_minutes_with_tz: timestamp, string -> int
getMinutes m duration_to_minutes: duration -> int
getSeconds m timestamp_to_seconds: timestamp -> int
getSeconds m timestamp_to_seconds_with_tz: timestamp, string -> int
getSeconds m duration_to_seconds: duration -> int
getMilliseconds m timestamp_to_milliseconds: timestamp -> int
getMilliseconds m timestamp_to_milliseconds_with_tz: timestamp, string -> int
getMilliseconds m duration_to_milliseconds: duration -> int
charAt m string_char_at_int: string, int -> string
indexOf m string_index_of_string: string, string -> int
indexOf m string_index_of_string_int: string, string, int -> int
lastIndexOf m string_last_index_of_string: string, string -> int
lastIndexOf m string_last_index_of_string_int: string, string, int -> int
lowerAscii m string_lower_ascii: string -> string
upperAscii m string_upper_ascii: string -> string
replace m string_replace_string_string: string, string, string -> string
replace m string_replace_string_string_int: string, string, string, int -> string
split m string_split_string: string, string -> list(string)
split m string_split_string_int: string, string, int -> list(string)
substring m string_substring_int: string, int -> string
substring m string_substring_int_int: string, int, int -> string
trim m string_trim: string -> string
join m list_join: list(string) -> string
join m list_join_string: list(string), string -> string
strings.quote g strings_quote: string -> string
format m string_format: string, list(dyn) -> string
isSorted m list_is_sorted: list(A) -> bool
sum m list_int_sum: list(int) -> int
sum m list_uint_sum: list(uint) -> uint
sum m list_double_sum: list(double) -> double
sum m list_duration_sum: list(duration) -> duration
min m list_min: list(A) -> A
max m list_max: list(A) -> A
indexOf m list_index_of: list(A), A -> int
lastIndexOf m list_last_index_of: list(A), A -> int
find m string_find: string, string -> string
findAll m string_find_all: string, string -> list(string)
findAll m string_find_all_n: string, string, int -> list(string)
url g string_to_url: string -> URL
isURL g is_url_string: string -> bool
getScheme m url_get_scheme: URL -> string
getHost m url_get_host: URL -> string
getHostname m url_get_hostname: URL -> string
getPort m url_get_port: URL -> string
getEscapedPath m url_get_escaped_path: URL -> string
getQuery m url_get_query: URL -> map(string, list(string))
quantity g string_to_quantity: string -> Quantity
isQuantity g is_quantity_string: string -> bool
sign m quantity_sign: Quantity -> int
isGreaterThan m quantity_is_greater_than: Quantity, Quantity -> bool
isLessThan m quantity_is_less_than: Quantity, Quantity -> bool
compareTo m quantity_compare_to: Quantity, Quantity -> int
add m quantity_add: Quantity, Quantity -> Quantity
add m quantity_add_int: Quantity, int -> Quantity
sub m quantity_sub: Quantity, Quantity -> Quantity
sub m quantity_sub_int: Quantity, int -> Quantity
asInteger m quantity_get_integer: Quantity -> int
isInteger m quantity_is_integer: Quantity -> bool
asApproximateFloat m quantity_get_float: Quantity -> double
ip g string_to_ip: string -> IP
isIP g is_ip: string -> bool
ip.isCanonical g ip_is_canonical: string -> bool
family m ip_family: IP -> int
isUnspecified m ip_is_unspecified: IP -> bool
isLoopback m ip_is_loopback: IP -> bool
isLinkLocalMulticast m ip_is_link_local_multicast: IP -> bool
isLinkLocalUnicast m ip_is_link_local_unicast: IP -> bool
isGlobalUnicast m ip_is_global_unicast: IP -> bool
cidr g string_to_cidr: string -> CIDR
isCIDR g is_cidr: string -> bool
containsIP m cidr_contains_ip_ip: CIDR, IP -> bool
containsIP m cidr_contains_ip_string: CIDR, string -> bool
containsCIDR m cidr_contains_cidr: CIDR, CIDR -> bool
containsCIDR m cidr_contains_cidr_string: CIDR, string -> bool
ip m cidr_ip: CIDR -> IP
masked m cidr_masked: CIDR -> CIDR
prefixLength m cidr_prefix_length: CIDR -> int
semver g string_to_semver: string -> Semver
semver g string_bool_to_semver: string, bool -> Semver
isSemver g is_semver: string -> bool
isSemver g is_semver_normalize: string, bool -> bool
major m semver_major: Semver -> int
minor m semver_minor: Semver -> int
patch m semver_patch: Semver -> int
isGreaterThan m semver_is_greater_than: Semver, Semver -> bool
isLessThan m semver_is_less_than: Semver, Semver -> bool
compareTo m semver_compare_to: Semver, Semver -> int
format.named g format_named: string -> optional(Format)
format.dns1123Label g format_dns1123label: -> Format
format.dns1123Subdomain g format_dns1123subdomain: -> Format
format.dns1035Label g format_dns1035label: -> Format
format.qualifiedName g format_qualifiedname: -> Format
format.dns1123LabelPrefix g format_dns1123labelprefix: -> Format
format.dns1123SubdomainPrefix g format_dns1123subdomainprefix: -> Format
format.dns1035LabelPrefix g format_dns1035labelprefix: -> Format
format.labelValue g format_labelvalue: -> Format
format.uri g format_uri: -> Format
format.uuid g format_uuid: -> Format
format.byte g format_byte: -> Format
format.date g format_date: -> Format
format.datetime g format_datetime: -> Format
validate m format_validate: Format, string -> optional(list(string))
sets.contains g list_sets_contains_list: list(A), list(A) -> bool
sets.equivalent g list_sets_equivalent_list: list(A), list(A) -> bool
sets.intersects g list_sets_intersects_list: list(A), list(A) -> bool
slice m list_slice: list(A), int, int -> list(A)
flatten m list_flatten: list(list(A)) -> list(A)
flatten m list_flatten_int: list(dyn), int -> list(dyn)
lists.range g lists_range: int -> list(int)
reverse m list_reverse: list(A) -> list(A)
distinct m list_distinct: list(A) -> list(A)
sort m list_sort: list(A) -> list(A)
first m list_first: list(A) -> optional(A)
last m list_last: list(A) -> optional(A)
optional.of g optional_of: A -> optional(A)
optional.ofNonZeroValue g optional_ofNonZeroValue: A -> optional(A)
optional.none g optional_none: -> optional(dyn)
hasValue m optional_hasValue: optional(A) -> bool
value m optional_value: optional(A) -> A
orValue m optional_orValue_value: optional(A), A -> A
or m optional_or_optional: optional(A), optional(A) -> optional(A)
cel.@mapInsert g cel_@mapInsert_map_key_value: map(A, B), A, B -> map(A, B)
cel.@mapInsert g cel_@mapInsert_map_map: map(A, B), map(A, B) -> map(A, B)
";

/// `a, b(c, d)` split at its top-level commas.
fn split_top(s: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter()
}

fn parse_ty(s: &str) -> Ty<'static> {
    let s = s.trim();
    let (head, inner) = match s.find('(') {
        Some(i) => (&s[..i], Some(&s[i + 1..s.len() - 1])),
        None => (s, None),
    };
    let args = |inner: &str| -> Vec<Ty<'static>> { split_top(inner).map(parse_ty).collect() };
    let prim = |p| Ty::P(p);
    match (head, inner) {
        ("list", Some(i)) => Ty::List(Box::new(parse_ty(i))),
        ("map", Some(i)) => {
            let mut a = args(i);
            let v = a.pop().expect("map value");
            Ty::Map(Box::new(a.pop().expect("map key")), Box::new(v))
        }
        ("optional", Some(i)) => Ty::optional(parse_ty(i)),
        ("type", Some(i)) => Ty::Type(Box::new(parse_ty(i))),
        ("bool", None) => prim(Prim::Bool),
        ("int", None) => prim(Prim::Int),
        ("uint", None) => prim(Prim::Uint),
        ("double", None) => prim(Prim::Double),
        ("string", None) => prim(Prim::String),
        ("bytes", None) => prim(Prim::Bytes),
        ("duration", None) => prim(Prim::Duration),
        ("timestamp", None) => prim(Prim::Timestamp),
        ("dyn", None) => DYN,
        ("A", None) => Ty::Param(0),
        ("B", None) => Ty::Param(1),
        ("IP", None) => Ty::Opaque("net.IP", vec![]),
        ("CIDR", None) => Ty::Opaque("net.CIDR", vec![]),
        ("URL", None) => Ty::Opaque("kubernetes.URL", vec![]),
        ("Quantity", None) => Ty::Opaque("kubernetes.Quantity", vec![]),
        ("Semver", None) => Ty::Opaque("kubernetes.Semver", vec![]),
        ("Format", None) => Ty::Opaque("kubernetes.NamedFormat", vec![]),
        _ => panic!("unknown type `{s}` in the overload table"),
    }
}

fn overloads() -> &'static [Overload] {
    static TABLE_PARSED: OnceLock<Vec<Overload>> = OnceLock::new();
    TABLE_PARSED.get_or_init(|| {
        let mut out = Vec::new();
        for line in TABLE.lines().filter(|l| !l.trim().is_empty()) {
            let (head, sig) = line.split_once(": ").expect("overload line");
            let mut h = head.split(' ');
            let (name, kind, id) = (h.next(), h.next(), h.next());
            let (params, result) = sig.split_once("->").expect("overload result");
            let params = params.trim();
            out.push(Overload {
                name: name.expect("name").to_string().leak(),
                member: kind == Some("m"),
                params: if params.is_empty() {
                    Vec::new()
                } else {
                    split_top(params).map(parse_ty).collect()
                },
                result: parse_ty(result),
                id: id.expect("id").to_string(),
            });
        }
        // Ordering: every pair of comparable types, numbers across their kinds.
        let ord = [
            ("_<_", "less"),
            ("_<=_", "less_equals"),
            ("_>_", "greater"),
            ("_>=_", "greater_equals"),
        ];
        let same = [
            ("bool", Prim::Bool, Prim::Bool),
            ("int64", Prim::Int, Prim::Int),
            ("uint64", Prim::Uint, Prim::Uint),
            ("double", Prim::Double, Prim::Double),
            ("string", Prim::String, Prim::String),
            ("bytes", Prim::Bytes, Prim::Bytes),
            ("timestamp", Prim::Timestamp, Prim::Timestamp),
            ("duration", Prim::Duration, Prim::Duration),
            ("int64_double", Prim::Int, Prim::Double),
            ("int64_uint64", Prim::Int, Prim::Uint),
            ("uint64_double", Prim::Uint, Prim::Double),
            ("uint64_int64", Prim::Uint, Prim::Int),
            ("double_int64", Prim::Double, Prim::Int),
            ("double_uint64", Prim::Double, Prim::Uint),
        ];
        for (op, id) in ord {
            for (suffix, a, b) in same {
                out.push(Overload {
                    name: op,
                    member: false,
                    params: vec![Ty::P(a), Ty::P(b)],
                    result: Ty::P(Prim::Bool),
                    id: format!("{id}_{suffix}"),
                });
            }
        }
        out
    })
}

/// Whether a global function of this (possibly qualified) name is declared.
pub(in crate::crdgen) fn is_function(name: &str) -> bool {
    overloads().iter().any(|o| o.name == name)
}

/// The type idents (`int` in `type(x) == int`).
pub(in crate::crdgen) fn type_ident(name: &str) -> Option<Ty<'static>> {
    Some(Ty::Type(Box::new(match name {
        "bool" => Ty::P(Prim::Bool),
        "int" => Ty::P(Prim::Int),
        "uint" => Ty::P(Prim::Uint),
        "double" => Ty::P(Prim::Double),
        "string" => Ty::P(Prim::String),
        "bytes" => Ty::P(Prim::Bytes),
        "null_type" => Ty::P(Prim::Null),
        "list" => Ty::List(Box::new(DYN)),
        "map" => Ty::Map(Box::new(DYN), Box::new(DYN)),
        "type" => Ty::Type(Box::new(DYN)),
        "google.protobuf.Duration" => Ty::P(Prim::Duration),
        "google.protobuf.Timestamp" => Ty::P(Prim::Timestamp),
        _ => return None,
    })))
}

/// The result of resolving a call.
pub(in crate::crdgen) enum Resolved<'d> {
    /// The matching overloads' ids and the result type.
    Ok(Vec<&'static str>, Ty<'d>),
    /// No function of this name and call style.
    Undeclared,
    /// Declared, but no overload takes these arguments.
    NoMatch,
}

/// Resolve `name` called on `args` (the target first when `member`).
pub(in crate::crdgen) fn resolve<'d>(name: &str, member: bool, args: &[Ty<'d>]) -> Resolved<'d> {
    let mut declared = false;
    let mut ids = Vec::new();
    let mut result: Option<Ty<'d>> = None;
    for o in overloads().iter().filter(|o| o.name == name) {
        declared = true;
        if o.member != member || o.params.len() != args.len() {
            continue;
        }
        let mut s = HashMap::new();
        if !o
            .params
            .iter()
            .zip(args)
            .all(|(p, a)| assignable(p, a, &mut s))
        {
            continue;
        }
        // Sorting, ordering and extremes are declared for the comparable types only.
        if matches!(
            o.id.as_str(),
            "list_sort" | "list_min" | "list_max" | "list_is_sorted"
        ) && !s
            .get(&0)
            .is_none_or(|t| matches!(t, Ty::P(p) if *p != Prim::Null))
        {
            continue;
        }
        // Nulls compare with objects (and optionals, dyn) only.
        if o.id == "equals" || o.id == "not_equals" {
            let null = |t: &Ty<'_>| matches!(t, Ty::P(Prim::Null));
            let nullable = |t: &Ty<'_>| {
                matches!(
                    t,
                    Ty::Object(_) | Ty::P(Prim::Null) | Ty::Opaque(OPTIONAL, _)
                ) || t.is_dyn()
            };
            if (null(&args[0]) && !nullable(&args[1])) || (null(&args[1]) && !nullable(&args[0])) {
                continue;
            }
        }
        let r = o.result.subst(&s);
        ids.push(o.id.as_str());
        result = Some(match result {
            None => r,
            Some(prev) if !prev.is_dyn() && !r.same(&prev) => DYN,
            Some(prev) => prev,
        });
    }
    match result {
        Some(r) => Resolved::Ok(ids, r),
        None if declared => Resolved::NoMatch,
        None => Resolved::Undeclared,
    }
}
