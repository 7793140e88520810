//! A CA made here (rcgen) and the certificates it signs, as PEM files: for the API's HTTPS,
//! mutual TLS, and receivers that take TLS.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use std::path::{Path, PathBuf};

/// A CA and what it signed, written as PEM files in `dir`.
pub struct Ca {
    /// The CA's certificate file.
    pub cert: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

pub fn ca(dir: &Path, name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let path = dir.join(format!("{name}.pem"));
    std::fs::write(&path, cert.pem()).unwrap();
    Ca {
        cert: path,
        issuer: Issuer::new(params, key),
    }
}

/// A certificate for `names` (the first its common name) signed by `ca`: (cert, key) files.
pub fn signed(ca: &Ca, dir: &Path, file: &str, names: &[&str]) -> (PathBuf, PathBuf) {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, names[0]);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    written(dir, file, &cert, &key)
}

/// `cert` and `key` as `dir/FILE.pem` and `dir/FILE.key`.
fn written(dir: &Path, file: &str, cert: &rcgen::Certificate, key: &KeyPair) -> (PathBuf, PathBuf) {
    let (c, k) = (
        dir.join(format!("{file}.pem")),
        dir.join(format!("{file}.key")),
    );
    std::fs::write(&c, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    (c, k)
}

/// A certificate for `names` as `openssl req -x509` makes one: self-signed, and a CA's, which
/// the server then presents as its own: (cert, key) files.
pub fn self_made(dir: &Path, file: &str, names: &[&str]) -> (PathBuf, PathBuf) {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, names[0]);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    written(dir, file, &cert, &key)
}
