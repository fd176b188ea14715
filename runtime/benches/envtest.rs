//! How long envtest takes: a control plane's start (with and without
//! kube-controller-manager) and its fault injections. Needs `KUBEBUILDER_ASSETS`.
//!
//! `cargo bench -p operator-rs-runtime --features testing --bench envtest [-- ROUNDS]`

use std::time::{Duration, Instant};

use operator_rs_runtime::testing::envtest::{Envtest, Error};
use operator_rs_runtime::testing::scale::percentile;

fn main() -> Result<(), Error> {
    if !Envtest::available() {
        return Ok(());
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(5);
    let mut with_manager = Vec::new();
    let mut without_manager = Vec::new();
    let mut apiserver_restarts = Vec::new();
    let mut etcd_restarts = Vec::new();
    for _ in 0..rounds {
        let (env, took) = timed(Envtest::start)?;
        with_manager.push(took);
        env.stop();
        let (env, took) = timed(|| Envtest::builder().controller_manager(false).start())?;
        without_manager.push(took);
        apiserver_restarts.push(timed(|| env.restart_apiserver())?.1);
        etcd_restarts.push(timed(|| env.restart_etcd())?.1);
        env.stop();
    }
    report(
        "start (etcd + kube-apiserver + kube-controller-manager)",
        with_manager,
    );
    report("start (etcd + kube-apiserver)", without_manager);
    report("restart_apiserver", apiserver_restarts);
    report("restart_etcd", etcd_restarts);
    Ok(())
}

fn timed<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<(T, Duration), Error> {
    let start = Instant::now();
    let value = f()?;
    Ok((value, start.elapsed()))
}

fn report(what: &str, samples: Vec<Duration>) {
    let ms = |p| percentile(&samples, p).as_secs_f64() * 1000.0;
    println!(
        "{what}: median {:.0} ms, min {:.0} ms, max {:.0} ms ({} rounds)",
        ms(50.0),
        ms(0.0),
        ms(100.0),
        samples.len()
    );
}
