//! Where an HTTP job connects: the addresses a URL's host resolves to, whether any of them is
//! on a private network (loopback, private, link-local, shared, unspecified, or a `localhost`
//! name), and the pins that make a request connect to exactly the addresses that were checked.
//!
//! A name is resolved once per request, by [`Destinations::resolve`]; the caller checks the
//! result, then [`Destinations::pin`]s it, and the job's HTTP client (built by
//! [`Destinations::client`]) resolves names only from those pins. A DNS answer that changes
//! between the check and the connection (DNS rebinding) therefore never reaches the socket, and
//! a name nobody checked cannot be connected to at all. IP literals need no resolution and are
//! checked as they are written.

use std::{
    collections::HashMap,
    io,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    sync::{Arc, Mutex},
};

use futures::{FutureExt, future::BoxFuture};
use reqwest::Url;

/// Resolves `(host name, port)` to socket addresses. [`system_lookup`] in Taskdeck; a test
/// gives names the addresses it wants.
pub type Lookup =
    Arc<dyn Fn(String, u16) -> BoxFuture<'static, io::Result<Vec<SocketAddr>>> + Send + Sync>;

/// The system resolver (`getaddrinfo`, through tokio).
pub fn system_lookup() -> Lookup {
    Arc::new(|host: String, port: u16| {
        async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        }
        .boxed()
    })
}

/// True for an address on a private network, never to be reached on an agent's word alone:
/// IPv4 `0.0.0.0/8`, `10/8`, `100.64/10`, `127/8`, `169.254/16`, `172.16/12`, `192.168/16` and
/// the broadcast address; IPv6 `::`, `::1`, `fc00::/7`, `fe80::/10`, and IPv4-mapped
/// (`::ffff:a.b.c.d`) forms of the IPv4 ones.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private_v4(v4),
            None => {
                let first = v6.segments()[0];
                v6.is_unspecified()
                    || v6.is_loopback()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
            }
        },
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || ip.is_broadcast()
}

/// True for `localhost` and the names under it (`app.localhost`, RFC 6761), whatever they
/// resolve to; case and a trailing dot do not matter.
pub fn is_localhost_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// The destination of one request: the URL's host and port and the addresses it resolved to.
#[derive(Debug, Clone, PartialEq)]
pub struct Destination {
    /// The host as the URL has it (a name, or an IP literal without brackets).
    pub host: String,
    /// The port (the scheme's default when the URL names none).
    pub port: u16,
    /// The addresses a connection may use (one for an IP literal). Never empty.
    pub addrs: Vec<SocketAddr>,
    /// True when the host is a name (then the job's client resolves it from a pin).
    pub named: bool,
}

impl Destination {
    /// `host:port`, with an IPv6 host in brackets (`[::1]:8080`): what the human is asked
    /// about and what an allowance is given for.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The first address on a private network ([`is_private`]), or, for a `localhost` name,
    /// its first address whatever it is. `None` when the destination is public.
    pub fn private_ip(&self) -> Option<IpAddr> {
        let mut ips = self.addrs.iter().map(SocketAddr::ip);
        if is_localhost_name(&self.host) {
            return ips.next();
        }
        ips.find(|ip| is_private(*ip))
    }
}

/// Checked addresses by host name, shared with the job's HTTP client.
type Pins = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

/// Resolution and pinning for one job's requests (one per task: pins are not shared).
pub struct Destinations {
    lookup: Lookup,
    pins: Pins,
}

impl Destinations {
    /// Destinations resolved with `lookup`, with nothing pinned yet.
    pub fn new(lookup: Lookup) -> Destinations {
        Destinations {
            lookup,
            pins: Arc::default(),
        }
    }

    /// Where `url` leads. Errors (as text for the task's status): the URL has no host, the
    /// name does not resolve, or resolves to no address.
    pub async fn resolve(&self, url: &Url) -> Result<Destination, String> {
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("{url} names no port"))?;
        // The URL parser has already normalised the host: IPv4 in dotted form, IPv6 in brackets.
        let host = url
            .host_str()
            .ok_or_else(|| format!("{url} names no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let ip = host.parse::<IpAddr>().ok();
        let addrs = match ip {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => (self.lookup)(host.clone(), port)
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?,
        };
        if addrs.is_empty() {
            return Err(format!("{host} resolves to no address"));
        }
        Ok(Destination {
            host,
            port,
            named: ip.is_none(),
            addrs,
        })
    }

    /// Lets the job's client connect to `dest`'s host name, at exactly `dest.addrs`, until the
    /// next pin of the same name. (An IP literal needs no pin.)
    pub fn pin(&self, dest: &Destination) {
        if dest.named {
            self.pins
                .lock()
                .unwrap()
                .insert(dest.host.clone(), dest.addrs.clone());
        }
    }

    /// A client for this job: `builder` plus name resolution from the pins only, no automatic
    /// redirects (the job checks every hop itself) and no proxy (the address checked must be
    /// the address connected to).
    pub fn client(&self, builder: reqwest::ClientBuilder) -> reqwest::Result<reqwest::Client> {
        builder
            .dns_resolver(Arc::new(Pinned(self.pins.clone())))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
    }
}

/// The job client's resolver: a name resolves to its pinned addresses, or not at all.
struct Pinned(Pins);

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let pinned = self.0.lock().unwrap().get(name.as_str()).cloned();
        let name = name.as_str().to_string();
        async move {
            match pinned {
                Some(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                None => Err(format!("{name} was not checked before connecting").into()),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;

    #[test]
    fn private_networks_are_recognised() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} is private");
        }
        for ip in [
            "8.8.8.8",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "192.169.0.1",
            "169.253.0.1",
            "2606:4700::1111",
            "fec0::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
        for name in ["localhost", "LocalHost.", "app.localhost"] {
            assert!(is_localhost_name(name), "{name}");
        }
        for name in ["localhost.example.com", "notlocalhost", "example.com"] {
            assert!(!is_localhost_name(name), "{name}");
        }
    }

    /// A lookup that answers `first` for the first query of any name and `then` afterwards: a
    /// DNS rebinding.
    fn rebinding(first: IpAddr, then: IpAddr) -> Lookup {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        Arc::new(move |_host: String, port: u16| {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let ip = if n == 0 { first } else { then };
            async move { Ok(vec![SocketAddr::new(ip, port)]) }.boxed()
        })
    }

    #[tokio::test]
    async fn a_name_resolves_once_and_the_client_connects_only_where_it_was_pinned() {
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        let local = IpAddr::V6(Ipv6Addr::LOCALHOST);
        let dests = Destinations::new(rebinding(public, local));
        let url = Url::parse("http://rebind.test:8080/x").unwrap();
        let dest = dests.resolve(&url).await.unwrap();
        assert_eq!(dest.authority(), "rebind.test:8080");
        assert_eq!(dest.private_ip(), None, "checked: public");
        dests.pin(&dest);
        // The name now resolves elsewhere; the client still only knows the checked address.
        assert_eq!(dests.resolve(&url).await.unwrap().private_ip(), Some(local));
        use reqwest::dns::Resolve as _;
        let resolver = Pinned(dests.pins.clone());
        let addrs: Vec<SocketAddr> = resolver
            .resolve("rebind.test".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert_eq!(addrs, vec![SocketAddr::new(public, 8080)]);
        let unchecked = resolver.resolve("other.test".parse().unwrap()).await;
        assert!(unchecked.is_err(), "a name nobody checked does not resolve");
    }

    #[tokio::test]
    async fn ip_literals_and_localhost_names_are_checked_as_written() {
        let dests = Destinations::new(rebinding(
            "93.184.216.34".parse().unwrap(),
            "93.184.216.34".parse().unwrap(),
        ));
        let at = |u: &str| Url::parse(u).unwrap();
        let v6 = dests.resolve(&at("http://[::1]:9/")).await.unwrap();
        assert_eq!(
            (v6.authority(), v6.private_ip(), v6.named),
            (
                "[::1]:9".into(),
                Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
                false
            )
        );
        let mapped = dests.resolve(&at("http://[::ffff:7f00:1]/")).await.unwrap();
        assert!(mapped.private_ip().is_some(), "{mapped:?}");
        let named = dests.resolve(&at("http://db.localhost/")).await.unwrap();
        assert_eq!(named.authority(), "db.localhost:80");
        assert!(
            named.private_ip().is_some(),
            "a localhost name is private whatever it resolves to"
        );
    }
}
