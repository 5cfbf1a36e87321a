//! Who may connect to a task and who may use its control RPCs: the `--allow_from` list
//! ([`AllowList`]) and the control-RPC rule ([`may_control`]: loopback, the allow list, the
//! cluster's task hosts, or on a mutual-TLS task a certificate naming one of them). The
//! accept loop that applies them is `access.rs`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ferroflow_core::Status;
use rustls_pki_types::CertificateDer;

/// Addresses allowed to connect (`--allow_from`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList(Vec<ipnet::IpNet>);

impl AllowList {
    /// Parses `CIDR,CIDR,...` (a bare address is one host), e.g. `10.0.0.0/8,127.0.0.1`.
    pub fn parse(s: &str) -> Result<AllowList, Status> {
        let mut nets = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let net = part
                .parse::<ipnet::IpNet>()
                .or_else(|_| part.parse::<IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    Status::invalid_argument(format!(
                        "--allow_from: '{part}' is neither an address nor a CIDR block (e.g. 10.0.0.0/8)"
                    ))
                })?;
            nets.push(net);
        }
        if nets.is_empty() {
            return Err(Status::invalid_argument("--allow_from names no address"));
        }
        Ok(AllowList(nets))
    }

    /// The blocks of the list, as CIDR text (`10.0.0.0/8`, `127.0.0.1/32`).
    pub fn blocks(&self) -> Vec<String> {
        self.0.iter().map(|n| n.to_string()).collect()
    }

    /// Whether `ip` is in the list (an IPv4 address seen as IPv6-mapped counts as IPv4).
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(&ip))
    }
}

pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether `host` (an advertised task host) is a loopback name or address.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost") || h.parse::<IpAddr>().is_ok_and(|ip| canonical(ip).is_loopback())
}

/// Who calls a control RPC: its address and, on a mutual-TLS task, the certificate the
/// handshake verified.
#[derive(Clone, Debug, Default)]
pub(crate) struct Caller {
    pub(crate) addr: Option<SocketAddr>,
    /// Whether the task asks every client for a certificate (mutual TLS).
    pub(crate) mutual_tls: bool,
    pub(crate) cert: Option<Arc<CertificateDer<'static>>>,
}

impl Caller {
    /// How a refusal names the caller.
    pub(crate) fn describe(&self) -> String {
        let addr = self.addr.map_or_else(|| "an unknown peer".to_string(), |p| p.to_string());
        if self.mutual_tls {
            format!("{addr} (whose certificate names none of the cluster's task hosts)")
        } else {
            addr
        }
    }
}

/// Whether `caller` may use the control RPCs: an address in the allow list; else, on a
/// mutual-TLS task, a client certificate that names the host of one of the cluster's tasks
/// (a DNS or IP subject name: the address alone, loopback included, is not enough); else
/// loopback or an address one of `cluster_hosts` resolves to (resolution bounded by 2 s).
pub(crate) async fn may_control(caller: &Caller, allow: Option<&AllowList>, cluster_hosts: &[String]) -> bool {
    let Some(peer) = caller.addr else { return false };
    let ip = canonical(peer.ip());
    if allow.is_some_and(|a| a.allows(ip)) {
        return true;
    }
    if caller.mutual_tls {
        return caller.cert.as_deref().is_some_and(|c| cert_names_a_task(c, cluster_hosts));
    }
    if ip.is_loopback() {
        return true;
    }
    for h in cluster_hosts {
        let lookup = tokio::net::lookup_host(format!("{}:0", h.trim_start_matches('[').trim_end_matches(']')));
        if let Ok(Ok(addrs)) = tokio::time::timeout(Duration::from_secs(2), lookup).await {
            if addrs.into_iter().any(|a| canonical(a.ip()) == ip) {
                return true;
            }
        }
    }
    false
}

/// Whether certificate `cert` is valid for one of `hosts` (DNS names or IP addresses).
fn cert_names_a_task(cert: &CertificateDer<'_>, hosts: &[String]) -> bool {
    let Ok(ee) = webpki::EndEntityCert::try_from(cert) else { return false };
    hosts.iter().any(|h| {
        let h = h.trim_start_matches('[').trim_end_matches(']');
        rustls_pki_types::ServerName::try_from(h).is_ok_and(|n| ee.verify_is_valid_for_subject_name(&n).is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_parse_and_match() {
        let a = AllowList::parse("10.0.0.0/8, 127.0.0.1,::1").unwrap();
        assert!(a.allows("10.1.2.3".parse().unwrap()));
        assert!(a.allows("127.0.0.1".parse().unwrap()));
        assert!(a.allows("::ffff:10.9.9.9".parse().unwrap()), "IPv4-mapped IPv6 counts as IPv4");
        assert!(a.allows("::1".parse().unwrap()));
        assert!(!a.allows("127.0.0.2".parse().unwrap()));
        assert!(!a.allows("192.168.1.1".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "example.com", " , "] {
            assert!(AllowList::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn loopback_hosts() {
        for h in ["localhost", "127.0.0.1", "127.3.4.5", "::1", "[::1]", "LOCALHOST"] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in ["0.0.0.0", "10.0.0.1", "ps-0.svc", "example.com"] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
