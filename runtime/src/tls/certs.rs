//! Making certificates with rcgen: a self-signed CA, and serving certificates it signs for
//! the names the API server calls the webhook server by. Used by `--webhook-local-url` and
//! `--webhook-cert-mode self-managed`; cert-manager does this job in a kubebuilder setup.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use time::OffsetDateTime;

/// Why a certificate could not be made.
#[derive(Debug, thiserror::Error)]
#[error("making a certificate: {0}")]
pub struct CertsError(#[from] rcgen::Error);

/// Certificates are valid from a little before they are made, for clocks that lag.
const CLOCK_SKEW: Duration = Duration::from_secs(3600);

/// A CA: its certificate (the `caBundle`) and its key, both PEM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateAuthority {
    /// The CA certificate, PEM.
    pub cert_pem: String,
    /// The CA's private key, PEM.
    pub key_pem: String,
    /// Its subject's common name.
    pub common_name: String,
    /// When it expires (seconds since the epoch).
    pub not_after: u64,
}

/// A serving certificate and its key, both PEM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingCert {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// Its private key, PEM.
    pub key_pem: String,
    /// When it expires (seconds since the epoch).
    pub not_after: u64,
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn validity(params: &mut CertificateParams, valid_for: Duration) -> u64 {
    let now = OffsetDateTime::now_utc();
    params.not_before = now - CLOCK_SKEW;
    let not_after = now + valid_for;
    params.not_after = not_after;
    not_after.unix_timestamp().max(0) as u64
}

impl CertificateAuthority {
    /// A new CA called `common_name`, valid for `valid_for`.
    pub fn generate(common_name: &str, valid_for: Duration) -> Result<Self, CertsError> {
        let key = KeyPair::generate()?;
        let mut params = ca_params(common_name);
        let not_after = validity(&mut params, valid_for);
        let cert = params.self_signed(&key)?;
        Ok(Self {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            common_name: common_name.to_owned(),
            not_after,
        })
    }

    /// A serving certificate for `names` (DNS names or IP addresses), valid for `valid_for`.
    pub fn issue(&self, names: &[String], valid_for: Duration) -> Result<ServingCert, CertsError> {
        let ca_key = KeyPair::from_pem(&self.key_pem)?;
        // The issuer is rebuilt from the CA's subject and key: what a signature and the
        // authority key identifier depend on, so no certificate parser is needed.
        let issuer = Issuer::new(ca_params(&self.common_name), ca_key);
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(names.to_vec())?;
        let mut name = DistinguishedName::new();
        name.push(
            DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.distinguished_name = name;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let not_after = validity(&mut params, valid_for);
        let cert = params.signed_by(&key, &issuer)?;
        Ok(ServingCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            not_after,
        })
    }
}

/// Whether something valid until `not_after` (epoch seconds) for `lifetime` should be renewed
/// now: when less than a third of its lifetime is left, as cert-manager does by default.
pub fn needs_renewal(not_after: u64, lifetime: Duration) -> bool {
    not_after.saturating_sub(now()) < lifetime.as_secs() / 3
}
