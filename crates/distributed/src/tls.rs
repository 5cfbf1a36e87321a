//! Transport security, opt-in: TLS (rustls) on a task's port and on the connections a
//! task or a Rust client opens.
//!
//! - A task started with a certificate and key ([`ServerTls`], `--tls_cert`/`--tls_key`)
//!   accepts only TLS connections; with `--tls_client_ca` it also asks every client for a
//!   certificate signed by that CA (mutual TLS) and refuses the others. Its target is
//!   `grpcs://host:port`, and it reaches its peer tasks over TLS, presenting its own
//!   certificate and trusting `--tls_ca` (default: the client CA).
//! - A client reaches a `grpcs://` target with the process's [`ClientTls`]: the one set by
//!   [`set_client_tls`], else the one given by the environment (`FERROFLOW_TLS_CA`, and
//!   `FERROFLOW_TLS_CERT` + `FERROFLOW_TLS_KEY` for a client certificate), else that of a TLS
//!   server running in the same process.
//!
//! TensorFlow's Python client speaks plain gRPC only; use `--allow_from` to restrict it.

use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

use ferroflow_core::Status;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// What a client presents and trusts on a TLS connection.
#[derive(Clone, Debug, Default)]
pub struct ClientTls {
    /// PEM of the CA certificates that sign the servers' certificates.
    pub ca_pem: Vec<u8>,
    /// PEM certificate chain and key presented to servers that ask for one (mutual TLS).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl ClientTls {
    /// The CA (and optionally the client certificate and key) read from PEM files.
    pub fn from_files(ca: &Path, identity: Option<(&Path, &Path)>) -> Result<ClientTls, Status> {
        let ca_pem = read_pem(ca, "CA certificate")?;
        certificates(&ca_pem, ca)?;
        let identity = match identity {
            Some((cert, key)) => Some((read_pem(cert, "certificate")?, read_pem(key, "private key")?)),
            None => None,
        };
        Ok(ClientTls { ca_pem, identity })
    }

    /// From `FERROFLOW_TLS_CA`, `FERROFLOW_TLS_CERT` and `FERROFLOW_TLS_KEY`; `None` when
    /// `FERROFLOW_TLS_CA` is unset.
    pub fn from_env() -> Result<Option<ClientTls>, Status> {
        let Some(ca) = std::env::var_os("FERROFLOW_TLS_CA") else { return Ok(None) };
        let cert = std::env::var_os("FERROFLOW_TLS_CERT");
        let key = std::env::var_os("FERROFLOW_TLS_KEY");
        let identity =
            match (&cert, &key) {
                (Some(c), Some(k)) => Some((Path::new(c), Path::new(k))),
                (None, None) => None,
                _ => return Err(Status::invalid_argument(
                    "FERROFLOW_TLS_CERT and FERROFLOW_TLS_KEY must be set together (a client certificate and its key)",
                )),
            };
        ClientTls::from_files(Path::new(&ca), identity).map(Some)
    }

    /// tonic's client configuration for a server named `host`.
    pub(crate) fn tonic_config(&self, host: &str) -> ClientTlsConfig {
        let mut c = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&self.ca_pem)).domain_name(host);
        if let Some((cert, key)) = &self.identity {
            c = c.identity(Identity::from_pem(cert, key));
        }
        c
    }
}

fn client_default() -> &'static RwLock<Option<ClientTls>> {
    static DEFAULT: OnceLock<RwLock<Option<ClientTls>>> = OnceLock::new();
    DEFAULT.get_or_init(|| RwLock::new(None))
}

/// Sets the TLS configuration this process's clients use for `grpcs://` targets.
pub fn set_client_tls(tls: ClientTls) {
    *client_default().write().unwrap_or_else(|e| e.into_inner()) = Some(tls);
}

/// Sets it unless one is already set (a TLS server's own configuration).
pub(crate) fn set_client_tls_if_unset(tls: &ClientTls) {
    let mut d = client_default().write().unwrap_or_else(|e| e.into_inner());
    if d.is_none() {
        *d = Some(tls.clone());
    }
}

/// The configuration for a `grpcs://` target (see the module docs).
pub(crate) fn client_tls_for(target: &str) -> Result<ClientTls, Status> {
    if let Some(t) = client_default().read().unwrap_or_else(|e| e.into_inner()).clone() {
        return Ok(t);
    }
    match ClientTls::from_env()? {
        Some(t) => {
            set_client_tls_if_unset(&t);
            Ok(t)
        }
        None => Err(Status::invalid_argument(format!(
            "'{target}' asks for TLS but no CA is configured: set FERROFLOW_TLS_CA (and FERROFLOW_TLS_CERT and \
             FERROFLOW_TLS_KEY for mutual TLS) or call ferroflow_distributed::set_client_tls"
        ))),
    }
}

/// A task's TLS: what it serves with and how it reaches its peers.
#[derive(Clone)]
pub struct ServerTls {
    pub(crate) acceptor: tokio_rustls::TlsAcceptor,
    /// Whether clients must present a certificate.
    pub(crate) mutual: bool,
    /// How this task reaches its peers.
    pub(crate) client: ClientTls,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").field("mutual", &self.mutual).finish_non_exhaustive()
    }
}

impl ServerTls {
    /// From PEM files: the task's certificate chain and key, the CA that signs client
    /// certificates (mutual TLS when given) and the CA that signs its peers' certificates
    /// (default: the client CA).
    pub fn from_files(
        cert: &Path,
        key: &Path,
        client_ca: Option<&Path>,
        ca: Option<&Path>,
    ) -> Result<ServerTls, Status> {
        let cert_pem = read_pem(cert, "certificate")?;
        let key_pem = read_pem(key, "private key")?;
        let client_ca_pem = client_ca.map(|p| read_pem(p, "client CA certificate")).transpose()?;
        let chain = certificates(&cert_pem, cert)?;
        let private = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
            Status::invalid_argument(format!("--tls_key '{}': no usable private key: {e}", key.display()))
        })?;
        let ca_pem = match ca {
            Some(p) => read_pem(p, "CA certificate")?,
            None => client_ca_pem.clone().ok_or_else(|| {
                Status::invalid_argument(
                    "--tls_cert needs --tls_ca or --tls_client_ca: the CA that signs the other tasks' certificates",
                )
            })?,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Status::internal(format!("TLS protocol versions: {e}")))?;
        let builder = match (&client_ca_pem, client_ca) {
            (Some(pem), Some(path)) => {
                let mut roots = rustls::RootCertStore::empty();
                for c in certificates(pem, path)? {
                    roots
                        .add(c)
                        .map_err(|e| Status::invalid_argument(format!("--tls_client_ca '{}': {e}", path.display())))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| Status::invalid_argument(format!("--tls_client_ca '{}': {e}", path.display())))?;
                builder.with_client_cert_verifier(verifier)
            }
            _ => builder.with_no_client_auth(),
        };
        let mut config = builder.with_single_cert(chain, private).map_err(|e| {
            Status::invalid_argument(format!(
                "--tls_cert '{}' and --tls_key '{}' do not make a usable identity: {e}",
                cert.display(),
                key.display()
            ))
        })?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        let client = ClientTls { ca_pem, identity: Some((cert_pem, key_pem)) };
        Ok(ServerTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            mutual: client_ca_pem.is_some(),
            client,
        })
    }
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, Status> {
    std::fs::read(path)
        .map_err(|e| Status::invalid_argument(format!("cannot read the TLS {what} '{}': {e}", path.display())))
}

fn certificates(pem: &[u8], path: &Path) -> Result<Vec<CertificateDer<'static>>, Status> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Status::invalid_argument(format!("'{}' is not a PEM certificate file: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(Status::invalid_argument(format!("'{}' holds no PEM certificate", path.display())));
    }
    Ok(certs)
}

/// Whether `target` names a TLS server (`grpcs://` or `https://`).
pub fn is_tls_target(target: &str) -> bool {
    target.starts_with("grpcs://") || target.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("ff_tls_unit_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let junk = dir.join("junk.pem");
        std::fs::write(&junk, b"not a certificate").unwrap();
        let missing = dir.join("missing.pem");
        let e = ServerTls::from_files(&junk, &junk, Some(&junk), None).unwrap_err();
        assert!(e.message.contains("junk.pem"), "{e}");
        let e = ServerTls::from_files(&missing, &junk, None, Some(&junk)).unwrap_err();
        assert!(e.message.contains("missing.pem") && e.message.contains("cannot read"), "{e}");
        assert!(ClientTls::from_files(&junk, None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_grpcs_target_without_a_ca_says_what_to_configure() {
        if std::env::var_os("FERROFLOW_TLS_CA").is_some() || client_default().read().unwrap().is_some() {
            return;
        }
        let e = client_tls_for("grpcs://h:1").unwrap_err();
        assert!(e.message.contains("grpcs://h:1") && e.message.contains("FERROFLOW_TLS_CA"), "{e}");
    }

    #[test]
    fn tls_targets() {
        assert!(is_tls_target("grpcs://h:1") && is_tls_target("https://h:1"));
        assert!(!is_tls_target("grpc://h:1") && !is_tls_target("h:1"));
    }
}
