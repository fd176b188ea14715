//! The CRD options of `PROJECT` (`crd: {knownFormatsOnly, maxDescLen}`) and `--max-desc-len`,
//! applied to every CRD after its versions are merged, so the static reader and `--exact` write
//! the same files. Both are off by default: the output is then kube-derive's, byte for byte.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use crate::project::CrdSettings;

/// The integer formats schemars writes that kube-apiserver does not know, and the known format
/// each becomes with `knownFormatsOnly` (int32 when every value fits in it, else int64).
pub(crate) const UNKNOWN_INT_FORMATS: &[(&str, &str)] = &[
    ("int8", "int32"),
    ("int16", "int32"),
    ("uint8", "int32"),
    ("uint16", "int32"),
    ("uint32", "int64"),
    ("uint64", "int64"),
    ("uint", "int64"),
    ("int", "int64"),
    ("int128", "int64"),
    ("uint128", "int64"),
];

/// Whether [`apply`] changes nothing, whatever the schema.
pub(crate) fn leaves_schemas_as_they_are(settings: &CrdSettings) -> bool {
    !settings.known_formats_only && settings.max_desc_len.is_none()
}

/// Apply `settings` to one CRD schema.
pub(crate) fn apply(schema: &mut JSONSchemaProps, settings: &CrdSettings) {
    if leaves_schemas_as_they_are(settings) {
        return;
    }
    for_each_schema(schema, &mut |s| {
        if settings.known_formats_only
            && let Some(f) = &s.format
            && let Some((_, known)) = UNKNOWN_INT_FORMATS.iter().find(|(u, _)| u == f)
        {
            s.format = Some((*known).to_string());
        }
        if let Some(max) = settings.max_desc_len {
            s.description = s
                .description
                .take()
                .and_then(|d| truncate_description(&d, max));
        }
    });
}

/// controller-gen's `crd:maxDescLen`: 0 drops the description; otherwise one longer than `max`
/// bytes is cut at the last sentence end within them, else at the last space (plus `...`), else
/// at `max` (plus `...`).
pub(crate) fn truncate_description(desc: &str, max: usize) -> Option<String> {
    if max == 0 {
        return None;
    }
    if desc.len() <= max {
        return Some(desc.to_string());
    }
    let mut cut = max;
    while !desc.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &desc[..cut];
    if let Some((n, c)) = head
        .char_indices()
        .rev()
        .find(|(_, c)| is_sentence_terminal(*c))
        && n > 0
    {
        return Some(head[..n + c.len_utf8()].to_string());
    }
    if let Some((n, _)) = head.char_indices().rev().find(|(_, c)| c.is_whitespace())
        && n > 0
    {
        return Some(format!("{}...", &head[..n]));
    }
    Some(format!("{head}..."))
}

/// Unicode's `STerm` for the scripts descriptions are written in.
fn is_sentence_terminal(c: char) -> bool {
    matches!(
        c,
        '.' | '!'
            | '?'
            | '\u{589}'
            | '\u{61F}'
            | '\u{6D4}'
            | '\u{964}'
            | '\u{965}'
            | '\u{3002}'
            | '\u{FF01}'
            | '\u{FF0E}'
            | '\u{FF1F}'
    )
}

/// Call `f` on `schema` and every schema below it.
pub(crate) fn for_each_schema(
    schema: &mut JSONSchemaProps,
    f: &mut impl FnMut(&mut JSONSchemaProps),
) {
    f(schema);
    for list in [&mut schema.all_of, &mut schema.any_of, &mut schema.one_of]
        .into_iter()
        .flatten()
    {
        for s in list {
            for_each_schema(s, f);
        }
    }
    for map in [
        &mut schema.properties,
        &mut schema.pattern_properties,
        &mut schema.definitions,
    ]
    .into_iter()
    .flatten()
    {
        for s in map.values_mut() {
            for_each_schema(s, f);
        }
    }
    if let Some(n) = &mut schema.not {
        for_each_schema(n, f);
    }
    match &mut schema.items {
        Some(JSONSchemaPropsOrArray::Schema(s)) => for_each_schema(s, f),
        Some(JSONSchemaPropsOrArray::Schemas(v)) => {
            v.iter_mut().for_each(|s| for_each_schema(s, f))
        }
        None => {}
    }
    for b in [
        &mut schema.additional_properties,
        &mut schema.additional_items,
    ]
    .into_iter()
    .flatten()
    {
        if let JSONSchemaPropsOrBool::Schema(s) = b {
            for_each_schema(s, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::truncate_description;

    #[test]
    fn truncation_follows_controller_gen() {
        assert_eq!(
            truncate_description("Short.", 10).as_deref(),
            Some("Short.")
        );
        assert_eq!(truncate_description("anything", 0), None);
        assert_eq!(
            truncate_description("First sentence. Second sentence.", 20).as_deref(),
            Some("First sentence.")
        );
        assert_eq!(
            truncate_description("no sentence end here at all", 12).as_deref(),
            Some("no sentence...")
        );
        assert_eq!(
            truncate_description("unbrokenwordlongerthanmax", 8).as_deref(),
            Some("unbroken...")
        );
        // A cut inside a multi-byte character backs off to its start.
        assert_eq!(truncate_description("ééééé", 3).as_deref(), Some("é..."));
    }
}
