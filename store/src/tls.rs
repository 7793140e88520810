//! runlog's TLS, in one place: the one crypto provider, PEM files read, and the one way a
//! client is set up ([`client_config`]) for the shared store's PostgreSQL (`sslrootcert`), a
//! model provider or an OTLP receiver (`ca_file`, `--otlp-ca`) and another host's `runlog
//! serve` (`--ca`); `serve`'s own certificate is read here too. One [`TlsError`] says which file
//! is wrong and why.
//!
//! Whom a client trusts: a certificate chain is checked by webpki against the roots; and when
//! the server's own certificate is exactly one of the certificates the person gave, that
//! certificate is trusted as given (its host name still checked). Why: `openssl req -x509`,
//! the usual way to make a certificate by hand, makes a CA certificate, and a server that
//! presents it presents a CA as its own certificate. webpki refuses that (`CaUsedAsEndEntity`)
//! even when it is the very file given; Python's `ssl` and curl accept it. Whoever names that
//! file means to trust that server.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why TLS cannot be set up with the files given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read, or holds no PEM item of the kind needed.
    #[error("{}: {why}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A certificate and its key do not go together, or rustls refused them.
    #[error("the certificate {} with key {}: {why}", cert.display(), key.display())]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// There is nothing to check the server's certificate against.
    #[error("no root certificate to check the server against")]
    NoRoots,
    /// rustls refused the setup itself.
    #[error("TLS cannot be set up: {0}")]
    Setup(String),
}

/// The one crypto provider runlog's TLS uses (ring).
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file: at least one.
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |why: String| TlsError::File {
        path: path.to_path_buf(),
        why,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(format!("cannot read: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(bad(
            "holds no certificate (a PEM `BEGIN CERTIFICATE` block)".into(),
        ));
    }
    Ok(certs)
}

/// The private key of a PEM file.
pub fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::File {
        path: path.to_path_buf(),
        why: format!("no private key read: {e}"),
    })
}

/// What a client checks a server's certificate against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Roots {
    /// The system's roots.
    System,
    /// The CA certificates of a PEM file, trusted alone.
    File(PathBuf),
    /// The system's roots and, when given, a PEM file's beside them.
    SystemAnd(Option<PathBuf>),
}

impl Roots {
    /// The roots, and the certificates of the file given (trusted as they are: see [`Given`]).
    pub fn load(&self) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), TlsError> {
        let mut roots = RootCertStore::empty();
        if matches!(self, Roots::System | Roots::SystemAnd(_)) {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        }
        let mut given = Vec::new();
        if let Roots::File(path) | Roots::SystemAnd(Some(path)) = self {
            for cert in certificates(path)? {
                roots.add(cert.clone()).map_err(|e| TlsError::File {
                    path: path.clone(),
                    why: format!("not a CA certificate: {e}"),
                })?;
                given.push(cert);
            }
        }
        if roots.is_empty() {
            return Err(TlsError::NoRoots);
        }
        Ok((roots, given))
    }
}

/// A client's configuration: its server checked by `verifier` (see [`verifier`]), showing the
/// certificate and key of `client` to a server that asks (mutual TLS).
pub fn client_config(
    verifier: Arc<dyn ServerCertVerifier>,
    client: Option<(&Path, &Path)>,
) -> Result<ClientConfig, TlsError> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Setup(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match client {
        None => Ok(builder.with_no_client_auth()),
        Some((cert, key)) => builder
            .with_client_auth_cert(certificates(cert)?, private_key(key)?)
            .map_err(|e| TlsError::Pair {
                cert: cert.to_path_buf(),
                key: key.to_path_buf(),
                why: e.to_string(),
            }),
    }
}

/// The verifier of a client trusting `roots` (see [`verifier`]).
pub fn verifier_of(roots: &Roots) -> Result<Arc<Given>, TlsError> {
    let (roots, given) = roots.load()?;
    verifier(roots, given, provider()).map_err(|e| TlsError::Setup(e.to_string()))
}

/// A chain checked against `roots`, or exactly one of `given` (a CA file's certificates).
#[derive(Debug)]
pub struct Given {
    chain: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
}

/// The verifier of a client trusting `roots`, and `given` as they are (the certificates of
/// the file the person named; none for the system's roots).
pub fn verifier(
    roots: RootCertStore,
    given: Vec<CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<Given>, rustls::client::VerifierBuilderError> {
    let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build()?;
    Ok(Arc::new(Given { chain, given }))
}

impl ServerCertVerifier for Given {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked = self.chain.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match checked {
            Err(refused) if self.given.iter().any(|g| g.as_ref() == end_entity.as_ref()) => {
                // The very certificate given: trusted as it is, for the names it holds.
                let parsed =
                    rustls::server::ParsedCertificate::try_from(end_entity).map_err(|_| refused)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chain.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chain.supported_verify_schemes()
    }
}

/// Whether a TLS failure, in rustls' words, is a server showing a CA certificate as its own
/// (and not the one given, which [`Given`] trusts).
pub fn is_ca_as_own(words: &str) -> bool {
    words.contains("CaUsedAsEndEntity")
}

/// What to tell a person whose server's certificate is refused as a CA certificate, for the
/// option that names the file (`--otlp-ca`, `sslrootcert`, `--ca`).
pub fn ca_as_own_hint(option: &str) -> String {
    format!(
        "the server presents a CA certificate as its own (as `openssl req -x509` makes one): give that very certificate with {option} and it is trusted as it is, or give the server a certificate signed by the CA that {option} names"
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    use rustls::pki_types::PrivateKeyDer;

    /// A certificate for `names`, made as `openssl req -x509` makes one (a CA's), and its key.
    fn self_made(names: &[&str]) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let der = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        (cert.der().clone(), der)
    }

    /// A whole handshake in memory with a server showing `shown`, the client trusting `given`
    /// for the name `host`: its error, if any.
    fn handshake(
        shown: &(CertificateDer<'static>, PrivateKeyDer<'static>),
        given: &CertificateDer<'static>,
        host: &str,
    ) -> Result<(), rustls::Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        roots.add(given.clone()).unwrap();
        let verifier = verifier(roots, vec![given.clone()], provider.clone()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![shown.0.clone()], shown.1.clone_key())
            .unwrap();
        let name = ServerName::try_from(host.to_owned()).unwrap();
        let mut c = rustls::ClientConnection::new(Arc::new(client), name).unwrap();
        let mut s = rustls::ServerConnection::new(Arc::new(server)).unwrap();
        for _ in 0..10 {
            let mut wire = Vec::new();
            c.write_tls(&mut wire).unwrap();
            s.read_tls(&mut wire.as_slice()).unwrap();
            s.process_new_packets().ok();
            let mut back = Vec::new();
            s.write_tls(&mut back).unwrap();
            c.read_tls(&mut back.as_slice()).unwrap();
            c.process_new_packets()?;
            if !c.is_handshaking() {
                return Ok(());
            }
        }
        panic!("the handshake did not end");
    }

    #[test]
    fn the_very_certificate_given_is_trusted_for_its_names_and_no_other() {
        let server = self_made(&["db.example", "127.0.0.1"]);
        let other = self_made(&["db.example"]);
        assert_eq!(handshake(&server, &server.0, "db.example"), Ok(()));
        assert_eq!(handshake(&server, &server.0, "127.0.0.1"), Ok(()));
        let wrong_name = handshake(&server, &server.0, "elsewhere.example").unwrap_err();
        assert!(
            format!("{wrong_name:?}").contains("NotValidForName"),
            "{wrong_name:?}"
        );
        let not_given = handshake(&server, &other.0, "db.example").unwrap_err();
        assert!(
            format!("{not_given:?}").contains("CaUsedAsEndEntity"),
            "{not_given:?}"
        );
    }
}
