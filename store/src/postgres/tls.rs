//! TLS to the PostgreSQL server, as libpq does it: `sslmode` (`disable`, `prefer` — the
//! default —, `require`, `verify-ca`, `verify-full`), `sslrootcert` (a PEM file, or `system`
//! for the system's roots), `sslcert` and `sslkey` (a client certificate), from the URL's
//! query or else the `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY` variables.
//!
//! As libpq: `prefer` and `require` encrypt without checking who answers (unless a root
//! certificate is given to `require`, which then checks the chain, as `verify-ca`);
//! `verify-ca` checks the chain; `verify-full` checks the chain and the host name.

use crate::error::{Result, StoreError};
use crate::tls::{Roots, TlsError};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What checking the server needs and was not given.
const NO_ROOT: &str = "checking the server needs its root certificate: add sslrootcert=FILE (PEM), or sslrootcert=system for the system's roots";

/// The URL parameters this module takes (tokio-postgres knows none but `sslmode`'s first three
/// values, and refuses the others).
const PARAMS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// How to reach the server: the mode and the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ssl {
    /// `disable` … `verify-full`.
    pub mode: Mode,
    /// The root certificates to check the server's with, or `system`.
    pub root: Option<String>,
    /// A client certificate and its key.
    pub client: Option<(PathBuf, PathBuf)>,
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Never TLS.
    Disable,
    /// TLS when the server offers it, unchecked.
    Prefer,
    /// TLS or no connection, unchecked (checked as `VerifyCa` with a root certificate).
    Require,
    /// TLS, the server's chain checked.
    VerifyCa,
    /// TLS, the chain and the host name checked.
    VerifyFull,
}

impl Mode {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "disable" => Mode::Disable,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => return None,
        })
    }

    /// The word, as the URL spells it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// `url` without the TLS parameters, and what they (or the `PG*` variables) say.
pub fn split(url: &str) -> Result<(String, Ssl)> {
    split_with(url, |name| std::env::var(name).ok())
}

/// [`split`] with the environment given.
pub fn split_with(url: &str, env: impl Fn(&str) -> Option<String>) -> Result<(String, Ssl)> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut given = std::collections::HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if PARAMS.contains(&k) {
            given.insert(k, decode(v));
        } else {
            kept.push(pair);
        }
    }
    let value = |key: &str, var: &str| given.get(key).cloned().or_else(|| env(var));
    let mode = match value("sslmode", "PGSSLMODE") {
        None => Mode::Prefer,
        Some(m) => Mode::parse(&m).ok_or_else(|| {
            StoreError::Tls(format!(
                "sslmode={m} is not a mode: disable, prefer, require, verify-ca or verify-full"
            ))
        })?,
    };
    let root = value("sslrootcert", "PGSSLROOTCERT");
    let client = match (value("sslcert", "PGSSLCERT"), value("sslkey", "PGSSLKEY")) {
        (Some(c), Some(k)) => Some((PathBuf::from(c), PathBuf::from(k))),
        (None, None) => None,
        _ => {
            return Err(StoreError::Tls(
                "a client certificate needs both sslcert and sslkey".into(),
            ))
        }
    };
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, Ssl { mode, root, client }))
}

/// `%XX` escapes decoded (paths in a URL's query).
fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(h)) => {
                out.push(h);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Ssl {
    /// tokio-postgres's own mode for this one (the checking is the connector's).
    pub fn tokio_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The connector every connection of the store is made with.
    pub fn connector(&self) -> Result<MakeRustlsConnect> {
        let checks = match (self.mode, &self.root) {
            (Mode::VerifyFull, _) => Checks::Full,
            (Mode::VerifyCa, _) | (Mode::Require, Some(_)) => Checks::Chain,
            _ => Checks::None,
        };
        let provider = crate::tls::provider();
        let verifier: Arc<dyn ServerCertVerifier> = match checks {
            Checks::None => Arc::new(Lenient {
                chain: None,
                provider,
            }),
            Checks::Chain | Checks::Full => {
                let roots = match self.root.as_deref() {
                    Some("system") => Roots::System,
                    Some(file) => Roots::File(file.into()),
                    None => return Err(self.invalid(NO_ROOT.into())),
                };
                let webpki = crate::tls::verifier_of(&roots).map_err(|e| match e {
                    TlsError::NoRoots => self.invalid(NO_ROOT.into()),
                    e => self.invalid(format!("sslrootcert {e}")),
                })?;
                if checks == Checks::Full {
                    webpki
                } else {
                    Arc::new(Lenient {
                        chain: Some(webpki),
                        provider,
                    })
                }
            }
        };
        let client = self
            .client
            .as_ref()
            .map(|(c, k)| (c.as_path(), k.as_path()));
        let config = crate::tls::client_config(verifier, client).map_err(|e| match e {
            e @ TlsError::File { .. } => self.invalid(format!("sslcert/sslkey {e}")),
            e => self.invalid(e.to_string()),
        })?;
        Ok(MakeRustlsConnect::new(config))
    }

    fn invalid(&self, why: String) -> StoreError {
        StoreError::Tls(format!("sslmode={}: {why}", self.mode.name()))
    }
}

/// A connection error with the mode in force and, when TLS is why, what to change; true when
/// TLS refused the connection (trying again would not help).
pub fn explained(mode: Mode, why: String) -> (String, bool) {
    let fix = if why.contains("no encryption") || why.contains("SSL off") {
        Some("the server accepts only encrypted connections: use sslmode=require, or verify-full with sslrootcert".to_owned())
    } else if why.contains("requires a valid client certificate") {
        Some("the server wants a client certificate: add sslcert=FILE and sslkey=FILE".to_owned())
    } else if why.contains("server does not support TLS") || why.contains("does not support SSL") {
        Some(
            "the server offers no TLS: enable ssl in its postgresql.conf, or use sslmode=prefer"
                .to_owned(),
        )
    } else if why.contains("not valid for name") || why.contains("NotValidForName") {
        Some("the server's certificate does not name the host in the URL: connect by a name it holds, or use sslmode=verify-ca".to_owned())
    } else if crate::tls::is_ca_as_own(&why) {
        Some(crate::tls::ca_as_own_hint("sslrootcert"))
    } else if why.contains("UnknownIssuer") || why.contains("invalid peer certificate") {
        Some("the server's certificate is not signed by a CA of sslrootcert: give the CA that signed it".to_owned())
    } else {
        None
    };
    match fix {
        Some(fix) => (format!("{why} (sslmode={}: {fix})", mode.name()), true),
        None => (why, false),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    None,
    Chain,
    Full,
}

/// What libpq checks short of `verify-full`: with no chain, nothing (`prefer`, `require`:
/// encrypted, whoever answers); with one, the chain but not the name (`verify-ca`: a
/// certificate made for another host name of the same server is accepted). The handshake's
/// signatures are checked either way.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<crate::tls::Given>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_tls_parameters_leave_the_url_and_the_default_is_prefer() {
        let (url, ssl) = split_with("postgres://u@h/db?application_name=x", none).unwrap();
        assert_eq!(url, "postgres://u@h/db?application_name=x");
        assert_eq!(ssl.mode, Mode::Prefer);
        let (url, ssl) = split_with(
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&connect_timeout=3",
            none,
        )
        .unwrap();
        assert_eq!(url, "postgres://u@h/db?connect_timeout=3");
        assert_eq!(ssl.mode, Mode::VerifyFull);
        assert_eq!(ssl.root.as_deref(), Some("/tmp/ca.pem"));
    }

    #[test]
    fn the_environment_counts_when_the_url_is_silent() {
        let env = |k: &str| match k {
            "PGSSLMODE" => Some("require".to_owned()),
            "PGSSLROOTCERT" => Some("system".to_owned()),
            _ => None,
        };
        let (_, ssl) = split_with("postgres://h/db", env).unwrap();
        assert_eq!(
            (ssl.mode, ssl.root.as_deref()),
            (Mode::Require, Some("system"))
        );
        let (_, ssl) = split_with("postgres://h/db?sslmode=disable", env).unwrap();
        assert_eq!(ssl.mode, Mode::Disable);
    }

    #[test]
    fn bad_modes_and_half_client_certificates_are_refused() {
        assert!(split_with("postgres://h/db?sslmode=maybe", none).is_err());
        assert!(split_with("postgres://h/db?sslcert=/c.pem", none).is_err());
    }
}
