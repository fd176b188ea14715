//! CRDs into text: the one YAML writer for CRDs, and the length of their JSON (for the size
//! limits). Rendering runs on the machine's other cores: a [`Prerender`] takes each CRD as soon as
//! its kind is built, finishes its schema and renders it while the next kinds are built; what is
//! left is dealt out over the cores at the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::{Scope, ScopedJoinHandle};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::crdgen::derive::crd::{PendingSchema, Refused, set_schema};
use crate::crdgen::kind::Rendered;

/// The YAML of a CRD: serde-saphyr over the typed CRD (field order is the struct's, so the text is
/// deterministic).
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    to_yaml_in(String::new(), crd)
}

/// [`to_yaml`] appended to `out` (given the capacity the text will need, it is not grown and
/// copied again and again).
fn to_yaml_in(mut out: String, crd: &CustomResourceDefinition) -> String {
    serde_saphyr::to_fmt_writer(&mut out, crd)
        .expect("a CustomResourceDefinition serializes to YAML");
    out
}

/// The length of a CRD's compact JSON as Go's `encoding/json` writes it (kubectl, the API
/// server), counted without building the text: serde_json's length, plus what Go's escaping
/// adds (`<`, `>` and `&` become `\u003c`..., U+2028 and U+2029 `\u2028`...; outside strings
/// JSON has none of them).
fn json_len(crd: &CustomResourceDefinition) -> usize {
    /// A writer that only counts bytes.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let html = buf
                .iter()
                .filter(|b| matches!(b, b'<' | b'>' | b'&'))
                .count();
            let separators = (buf.windows(3))
                .filter(|w| matches!(w, [0xE2, 0x80, 0xA8 | 0xA9]))
                .count();
            self.0 += buf.len() + 5 * html + 3 * separators;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, crd).map_or(0, |()| count.0)
}

pub(crate) fn render(crd: &CustomResourceDefinition) -> Rendered {
    let json_len = json_len(crd);
    // The YAML is about as long as the JSON: room for a quarter more.
    let yaml = to_yaml_in(String::with_capacity(json_len + json_len / 4), crd);
    Rendered { yaml, json_len }
}

/// Each CRD's [`Rendered`], in order: `done[i]` where given, else rendered here, the CRDs dealt
/// out over the machine's cores in turn (large CRDs are megabytes of YAML, and often neighbours).
pub(crate) fn all(
    crds: &[&CustomResourceDefinition],
    mut done: Vec<Option<Rendered>>,
) -> Vec<Rendered> {
    let todo: Vec<usize> = (0..crds.len()).filter(|&i| done[i].is_none()).collect();
    let threads = cores().min(todo.len());
    if threads < 2 {
        for i in todo {
            done[i] = Some(render(crds[i]));
        }
    } else {
        let todo = &todo;
        let rendered: Vec<(usize, Rendered)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || {
                        todo.iter()
                            .skip(t)
                            .step_by(threads)
                            .map(|&i| (i, render(crds[i])))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(joined).collect()
        });
        for (i, r) in rendered {
            done[i] = Some(r);
        }
    }
    done.into_iter()
        .map(|r| r.expect("every CRD is rendered"))
        .collect()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What a scoped thread returned (its panic goes on in the caller).
fn joined<T>(handle: ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// A CRD handed over, and its schema still to finish (the generator's transforms and the
/// conversion, which need nothing of the crate).
type Handing = (CustomResourceDefinition, Option<PendingSchema>);

/// What became of a CRD handed over.
pub(crate) enum Handed {
    /// Its schema finished and set, and the CRD rendered, on the other core.
    Rendered(Rendered),
    /// Its schema refused there (the CRD is as handed over).
    Refused(Refused),
    /// Kept as handed over (a machine of one core): its schema still to finish.
    Kept(Option<PendingSchema>),
}

/// Finishes the schema of, and renders, on another core, each CRD handed to it, in turn, while the
/// caller goes on.
pub(crate) struct Prerender<'scope> {
    queue: Option<mpsc::Sender<Handing>>,
    worker: Option<ScopedJoinHandle<'scope, Vec<(CustomResourceDefinition, Handed)>>>,
    /// Set when the caller stops early (a panic): the worker renders no more.
    stop: &'scope AtomicBool,
    /// What is kept here when the machine has one core (finished and rendered later).
    kept: Vec<Handing>,
}

impl Prerender<'_> {
    /// Hand over a CRD and its pending schema (given back by [`Prerender::take`]).
    pub fn hand(&mut self, crd: CustomResourceDefinition, pending: Option<PendingSchema>) {
        match &self.queue {
            Some(queue) => queue
                .send((crd, pending))
                .expect("the renderer runs until the queue closes"),
            None => self.kept.push((crd, pending)),
        }
    }

    /// Every CRD handed over, in order, and what became of it.
    pub fn take(&mut self) -> Vec<(CustomResourceDefinition, Handed)> {
        self.queue = None;
        let mut out: Vec<_> = (self.kept.drain(..))
            .map(|(crd, pending)| (crd, Handed::Kept(pending)))
            .collect();
        if let Some(worker) = self.worker.take() {
            out.extend(joined(worker));
        }
        out
    }
}

impl Drop for Prerender<'_> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Run `body` with a [`Prerender`] (on a machine of one core it renders nothing: what is handed
/// over is given back as it is).
pub(crate) fn with_prerender<R>(body: impl FnOnce(&mut Prerender<'_>) -> R) -> R {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let mut prerender = if cores() < 2 {
            Prerender {
                queue: None,
                worker: None,
                stop: &stop,
                kept: Vec::new(),
            }
        } else {
            spawn(scope, &stop)
        };
        body(&mut prerender)
    })
}

fn spawn<'scope>(scope: &'scope Scope<'scope, '_>, stop: &'scope AtomicBool) -> Prerender<'scope> {
    let (queue, handed) = mpsc::channel::<Handing>();
    let worker = scope.spawn(move || {
        let mut out = Vec::new();
        for (mut crd, pending) in handed {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(pending) = pending {
                match pending.finish() {
                    Ok(props) => set_schema(&mut crd, props),
                    Err(refused) => {
                        out.push((crd, Handed::Refused(refused)));
                        continue;
                    }
                }
            }
            let rendered = render(&crd);
            out.push((crd, Handed::Rendered(rendered)));
        }
        out
    });
    Prerender {
        queue: Some(queue),
        worker: Some(worker),
        stop,
        kept: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str) -> CustomResourceDefinition {
        let mut crd = CustomResourceDefinition::default();
        crd.metadata.name = Some(name.to_string());
        crd
    }

    #[test]
    fn what_is_handed_over_comes_back_in_order_rendered_as_after() {
        let names: Vec<String> = (0..7).map(|i| format!("k{i}.example.com")).collect();
        let back = with_prerender(|pre| {
            for n in &names {
                pre.hand(crd(n), None);
            }
            pre.take()
        });
        assert_eq!(back.len(), names.len());
        let mut done = Vec::new();
        for ((crd, handed), n) in back.iter().zip(&names) {
            assert_eq!(crd.metadata.name.as_deref(), Some(n.as_str()));
            match handed {
                Handed::Rendered(r) => {
                    assert_eq!(r.yaml, to_yaml(crd));
                    assert_eq!(r.json_len, serde_json::to_string(crd).unwrap().len());
                    done.push(Some(r.clone()));
                }
                Handed::Kept(None) => done.push(None),
                _ => panic!("nothing to refuse"),
            }
        }
        let refs: Vec<&CustomResourceDefinition> = back.iter().map(|(c, _)| c).collect();
        let all_rendered = all(&refs, done);
        for (r, crd) in all_rendered.iter().zip(&refs) {
            assert_eq!(r.yaml, to_yaml(crd));
        }
    }
}
