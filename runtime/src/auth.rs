//! Delegated authentication and authorization of HTTP requests, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` protects the metrics endpoint: the API server
//! says who a bearer token belongs to (a TokenReview, `authentication.k8s.io/v1`) and whether
//! that user may `get` the request's path (a SubjectAccessReview with
//! `nonResourceAttributes`, `authorization.k8s.io/v1`, as RBAC's `nonResourceURLs` rules
//! grant).
//!
//! No or an invalid token is answered `401 Unauthorized`, a user without the right
//! `403 Forbidden`, a review the API server could not answer `500`. Answers are cached like
//! kube-apiserver's delegating authenticator and authorizer that controller-runtime
//! configures (tokens 1 minute, allowed 5 minutes, denied 30 seconds; at most
//! [`CACHE_CAPACITY`] entries each, tokens kept only as their SHA-256), so a scrape every few
//! seconds costs no API call after the first.
//!
//! A review the API server fails to answer for a passing reason (unreachable, 429, 5xx) is
//! tried again with backoff, as those delegating authenticators and authorizers retry theirs
//! (kube-apiserver's `webhook.DefaultRetryBackoff`: [`REVIEW_TRIES`] tries, [`REVIEW_BACKOFF`]
//! apart at first, each wait 1.5 times the last); a verdict (401, 403, ...) is never retried.
//!
//! The manager's own client makes the reviews: it needs `create` on `tokenreviews` and
//! `subjectaccessreviews` (the generated `config/rbac/metrics_auth_role.yaml`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use ring::digest::{SHA256, digest};
use serde_json::{Value, json};

/// How long a token's review is reused, whatever its answer (kube-apiserver's delegating
/// authenticator, as controller-runtime configures it).
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(60);
/// How long an allowed request's review is reused.
pub const ALLOW_CACHE_TTL: Duration = Duration::from_secs(5 * 60);
/// How long a denied request's review is reused.
pub const DENY_CACHE_TTL: Duration = Duration::from_secs(30);
/// Most entries each cache holds; past it, expired entries go first, then the soonest to expire.
pub const CACHE_CAPACITY: usize = 4096;

/// How many times a review is tried when the API server fails to answer it for a passing
/// reason ([`is_transient`]).
pub const REVIEW_TRIES: u32 = 5;
/// The wait before the second try; each later wait is 1.5 times the one before (0.5 s, 0.75 s,
/// 1.1 s, 1.7 s: about 4 s in all, within a Prometheus scrape's 10 s timeout).
pub const REVIEW_BACKOFF: Duration = Duration::from_millis(500);

/// Whether a failed review may pass by itself: the API server unreachable (no connection, or
/// one cut), overloaded (429) or failing (5xx). A verdict on the request (401, 403, 404, ...)
/// or a request it cannot read is not.
pub fn is_transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// `review()`, tried again after [`REVIEW_BACKOFF`] (growing 1.5 times each time) while it fails
/// for a passing reason, [`REVIEW_TRIES`] times at most.
async fn with_retries<T, F>(what: &str, mut review: impl FnMut() -> F) -> Result<T, kube::Error>
where
    F: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut wait = REVIEW_BACKOFF;
    for tried in 1..REVIEW_TRIES {
        match review().await {
            Err(error) if is_transient(&error) => {
                tracing::debug!(%error, tried, "{what} failed; trying again in {wait:?}");
                tokio::time::sleep(wait).await;
                wait = wait.mul_f64(1.5);
            }
            answer => return answer,
        }
    }
    review().await
}

/// Why a request is refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer <token>` header.
    #[error("Unauthorized: no bearer token (send `Authorization: Bearer <token>`)")]
    NoToken,
    /// The API server does not know the token.
    #[error("Unauthorized: the bearer token is not valid{}", reason_suffix(.0))]
    InvalidToken(String),
    /// The user may not make the request.
    #[error("Forbidden: user {user} may not {verb} {path}{}", reason_suffix(.reason))]
    Forbidden {
        /// Who asked.
        user: String,
        /// The verb (the request's method, lower case).
        verb: String,
        /// The request's path.
        path: String,
        /// The authorizer's reason, if any.
        reason: String,
    },
    /// The API server could not answer a review (after [`REVIEW_TRIES`] tries, if it failed
    /// for a passing reason).
    #[error("{review} failed: {source}")]
    Review {
        /// `TokenReview` or `SubjectAccessReview`.
        review: &'static str,
        /// Why.
        source: kube::Error,
    },
}

fn reason_suffix(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    }
}

impl AuthError {
    /// The HTTP status it is answered with: 401, 403 or 500.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NoToken | Self::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::Review { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Who a token belongs to, as its TokenReview says.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct User {
    /// The user name (`system:serviceaccount:<namespace>:<name>` for a ServiceAccount).
    pub name: String,
    /// The user's UID, if any.
    pub uid: Option<String>,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Further attributes of the user.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl User {
    /// From a TokenReview's `status.user` (JSON).
    fn from_review(user: &Value) -> Self {
        let strings = |value: &Value| -> Vec<String> {
            (value.as_array().into_iter().flatten())
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        };
        Self {
            name: (user.get("username").and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned(),
            uid: (user.get("uid").and_then(Value::as_str))
                .filter(|uid| !uid.is_empty())
                .map(String::from),
            groups: strings(&user["groups"]),
            extra: (user
                .get("extra")
                .and_then(Value::as_object)
                .into_iter()
                .flatten())
            .map(|(key, values)| (key.clone(), strings(values)))
            .collect(),
        }
    }
}

/// Authenticates and authorizes requests through the API server; clones share the caches.
#[derive(Clone)]
pub struct DelegatedAuth {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    tokens: Mutex<Cache<Result<User, String>>>,
    decisions: Mutex<Cache<Result<(), String>>>,
    token_reviews: AtomicU64,
    access_reviews: AtomicU64,
}

impl std::fmt::Debug for DelegatedAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegatedAuth")
            .field("token_reviews", &self.token_reviews())
            .field("access_reviews", &self.access_reviews())
            .finish_non_exhaustive()
    }
}

impl DelegatedAuth {
    /// Reviews through `client`, which needs `create` on `tokenreviews` and
    /// `subjectaccessreviews`.
    pub fn new(client: Client) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                tokens: Mutex::new(Cache::new(CACHE_CAPACITY)),
                decisions: Mutex::new(Cache::new(CACHE_CAPACITY)),
                token_reviews: AtomicU64::new(0),
                access_reviews: AtomicU64::new(0),
            }),
        }
    }

    /// `router` with every request authenticated and authorized first (verb: the method in
    /// lower case, path: the request's); refusals are answered with [`AuthError::status`].
    pub fn protect(&self, router: Router) -> Router {
        let auth = self.clone();
        router.layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let auth = auth.clone();
                async move {
                    let verb = request.method().as_str().to_ascii_lowercase();
                    let path = request.uri().path().to_owned();
                    match auth.check(request.headers(), &verb, &path).await {
                        Ok(_) => next.run(request).await,
                        Err(err) => refused(err),
                    }
                }
            },
        ))
    }

    /// Who sent `headers`' bearer token, if they may `verb` `path`.
    pub async fn check(
        &self,
        headers: &HeaderMap,
        verb: &str,
        path: &str,
    ) -> Result<User, AuthError> {
        let user = self.authenticate(headers).await?;
        self.authorize(&user, verb, path).await?;
        Ok(user)
    }

    /// Who `headers`' bearer token belongs to (a TokenReview, cached [`TOKEN_CACHE_TTL`]).
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<User, AuthError> {
        let token = bearer_token(headers).ok_or(AuthError::NoToken)?;
        let key = sha256(token.as_bytes());
        if let Some(known) = self.inner.tokens.lock().expect("cache lock").get(&key) {
            return known.map_err(AuthError::InvalidToken);
        }
        // Through JSON, both ways: the optionality of TokenReview's fields differs between the
        // Kubernetes versions an operator may pick.
        let review: TokenReview =
            serde_json::from_value(json!({"spec": {"token": token}})).expect("a TokenReview");
        self.inner.token_reviews.fetch_add(1, Ordering::Relaxed);
        let api = Api::<TokenReview>::all(self.inner.client.clone());
        let params = PostParams::default();
        let create = || api.create(&params, &review);
        let answer = with_retries("TokenReview", create)
            .await
            .map_err(|source| AuthError::Review {
                review: "TokenReview",
                source,
            })?;
        let status = serde_json::to_value(answer)
            .ok()
            .and_then(|answer| answer.get("status").cloned())
            .unwrap_or_default();
        let outcome = match status.get("authenticated").and_then(Value::as_bool) {
            Some(true) => Ok(User::from_review(&status["user"])),
            _ => Err((status.get("error").and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned()),
        };
        let mut tokens = self.inner.tokens.lock().expect("cache lock");
        tokens.insert(key, outcome.clone(), TOKEN_CACHE_TTL);
        outcome.map_err(AuthError::InvalidToken)
    }

    /// Whether `user` may `verb` the non-resource `path` (a SubjectAccessReview, cached
    /// [`ALLOW_CACHE_TTL`] when allowed, [`DENY_CACHE_TTL`] when not).
    pub async fn authorize(&self, user: &User, verb: &str, path: &str) -> Result<(), AuthError> {
        let key = sha256(
            serde_json::to_string(&(user, verb, path))
                .expect("a user serializes")
                .as_bytes(),
        );
        let forbidden = |reason: String| AuthError::Forbidden {
            user: user.name.clone(),
            verb: verb.to_owned(),
            path: path.to_owned(),
            reason,
        };
        if let Some(known) = self.inner.decisions.lock().expect("cache lock").get(&key) {
            return known.map_err(forbidden);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: Some(user.extra.clone()),
                non_resource_attributes: Some(NonResourceAttributes {
                    verb: Some(verb.to_owned()),
                    path: Some(path.to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        self.inner.access_reviews.fetch_add(1, Ordering::Relaxed);
        let api = Api::<SubjectAccessReview>::all(self.inner.client.clone());
        let params = PostParams::default();
        let create = || api.create(&params, &review);
        let answer = with_retries("SubjectAccessReview", create)
            .await
            .map_err(|source| AuthError::Review {
                review: "SubjectAccessReview",
                source,
            })?;
        let status = answer.status.unwrap_or_default();
        let (outcome, ttl) = if status.allowed {
            (Ok(()), ALLOW_CACHE_TTL)
        } else {
            (Err(status.reason.unwrap_or_default()), DENY_CACHE_TTL)
        };
        let mut decisions = self.inner.decisions.lock().expect("cache lock");
        decisions.insert(key, outcome.clone(), ttl);
        outcome.map_err(forbidden)
    }

    /// TokenReviews made so far (cache misses).
    pub fn token_reviews(&self) -> u64 {
        self.inner.token_reviews.load(Ordering::Relaxed)
    }

    /// SubjectAccessReviews made so far (cache misses).
    pub fn access_reviews(&self) -> u64 {
        self.inner.access_reviews.load(Ordering::Relaxed)
    }
}

/// The response to a refused request, logged.
fn refused(err: AuthError) -> Response {
    match &err {
        AuthError::Review { .. } => tracing::warn!(error = %err, "authenticating a request failed"),
        _ => tracing::debug!(error = %err, "request refused"),
    }
    (err.status(), format!("{err}\n")).into_response()
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case), as
/// kube-apiserver reads it.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' '))
        .then_some(token)
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    digest(&SHA256, bytes)
        .as_ref()
        .try_into()
        .expect("SHA-256 is 32 bytes")
}

/// Answers by key until they expire, at most `capacity` of them.
struct Cache<T> {
    entries: HashMap<[u8; 32], (Instant, T)>,
    capacity: usize,
}

impl<T: Clone> Cache<T> {
    fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            capacity,
        }
    }

    fn get(&mut self, key: &[u8; 32]) -> Option<T> {
        match self.entries.get(key) {
            Some((expiry, value)) if *expiry > Instant::now() => Some(value.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn insert(&mut self, key: [u8; 32], value: T, ttl: Duration) {
        let now = Instant::now();
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (expiry, _)| *expiry > now);
            if self.entries.len() >= self.capacity
                && let Some(soonest) = (self.entries.iter())
                    .min_by_key(|(_, (expiry, _))| *expiry)
                    .map(|(key, _)| *key)
            {
                self.entries.remove(&soonest);
            }
        }
        self.entries.insert(key, (now + ttl, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn bearer_tokens_are_read_as_kube_apiserver_reads_them() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("BEARER  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic dXNlcjpwdw==")), None);
        assert_eq!(bearer_token(&headers("Bearer")), None);
        assert_eq!(bearer_token(&headers("Bearer ")), None);
        assert_eq!(bearer_token(&headers("Bearer a b")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    #[test]
    fn the_cache_forgets_expired_answers_and_stays_bounded() {
        let mut cache = Cache::new(2);
        let key = |n: u8| [n; 32];
        cache.insert(key(1), "one", Duration::from_secs(60));
        cache.insert(key(2), "two", Duration::from_secs(30));
        assert_eq!(cache.get(&key(1)), Some("one"));
        // Full: the entry closest to expiry makes room.
        cache.insert(key(3), "three", Duration::from_secs(60));
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(cache.get(&key(2)), None);
        assert_eq!(cache.get(&key(3)), Some("three"));
        // Expired entries are not answered, and go first when room is needed.
        cache.insert(key(4), "four", Duration::ZERO);
        assert_eq!(cache.get(&key(4)), None);
        assert_eq!(cache.entries.len(), 1);
        // Replacing a key in a full cache evicts nothing else.
        cache.insert(key(5), "five", Duration::from_secs(60));
        cache.insert(key(5), "FIVE", Duration::from_secs(60));
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(cache.get(&key(5)), Some("FIVE"));
    }

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        let api = |code| {
            let status = kube::core::Status::failure("review", "Reason").with_code(code);
            kube::Error::Api(status.boxed())
        };
        for code in [429, 500, 502, 503, 504] {
            assert!(is_transient(&api(code)), "{code}");
        }
        for code in [400, 401, 403, 404, 409, 422] {
            assert!(!is_transient(&api(code)), "{code}");
        }
        assert!(is_transient(&kube::Error::Service(
            "connection refused".into()
        )));
        let unreadable = serde_json::from_str::<Value>("{").unwrap_err();
        assert!(!is_transient(&kube::Error::SerdeError(unreadable)));
    }

    #[test]
    fn refusals_map_to_their_statuses() {
        assert_eq!(AuthError::NoToken.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            AuthError::InvalidToken(String::new()).status(),
            StatusCode::UNAUTHORIZED
        );
        let forbidden = AuthError::Forbidden {
            user: "system:serviceaccount:a:b".into(),
            verb: "get".into(),
            path: "/metrics".into(),
            reason: String::new(),
        };
        assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            forbidden.to_string(),
            "Forbidden: user system:serviceaccount:a:b may not get /metrics"
        );
    }
}
