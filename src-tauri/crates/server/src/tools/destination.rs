//! Where an HTTP job connects: the addresses a URL's host resolves to, whether any of them is
//! this machine or on a private network (loopback, private, link-local, shared, multicast,
//! reserved, unspecified, an IPv6 form embedding such an IPv4 address, an address of one of
//! this machine's own network interfaces, or a `localhost` name), and the pins that make a
//! request connect to exactly the addresses that were checked.
//!
//! A name is resolved once per request, by [`Destinations::resolve`]; the caller checks the
//! result, then [`Destinations::pin`]s it, and the job's HTTP client (built by
//! [`Destinations::client`]) resolves names only from those pins. A DNS answer that changes
//! between the check and the connection (DNS rebinding) therefore never reaches the socket, and
//! a name nobody checked cannot be connected to at all. IP literals need no resolution and are
//! checked as they are written.

use std::{
    collections::HashMap,
    fmt, io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use reqwest::Url;

/// Longest wait for a host name to resolve; a slower answer is a failure to resolve.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves `(host name, port)` to socket addresses. [`system_lookup`] in Taskdeck; a test
/// gives names the addresses it wants.
pub type Lookup =
    Arc<dyn Fn(String, u16) -> BoxFuture<'static, io::Result<Vec<SocketAddr>>> + Send + Sync>;

/// Lists the addresses of this machine's network interfaces, read anew on every call (they
/// change: DHCP, VPNs). [`system_interfaces`] in Taskdeck; a test gives the ones it wants.
pub type Interfaces = Arc<dyn Fn() -> Vec<IpAddr> + Send + Sync>;

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

/// This machine's interface addresses as `getifaddrs(3)` lists them (every interface, up or
/// down, IPv4 and IPv6). When they cannot be listed, only the failure is logged: loopback and
/// the private ranges are still recognised by [`is_private`].
pub fn system_interfaces() -> Interfaces {
    Arc::new(|| match nix::ifaddrs::getifaddrs() {
        Ok(interfaces) => interfaces
            .filter_map(|i| {
                let address = i.address?;
                match (address.as_sockaddr_in(), address.as_sockaddr_in6()) {
                    (Some(v4), _) => Some(IpAddr::V4(v4.ip())),
                    (_, Some(v6)) => Some(IpAddr::V6(v6.ip())),
                    _ => None,
                }
            })
            .collect(),
        Err(e) => {
            tracing::warn!("cannot list this machine's network interfaces: {e}");
            Vec::new()
        }
    })
}

/// True for an address on a private network, never to be reached on an agent's word alone:
/// IPv4 `0.0.0.0/8`, `10/8`, `100.64/10`, `127/8`, `169.254/16`, `172.16/12`, `192.168/16`,
/// multicast `224/4`, reserved `240/4` (the broadcast address among them); IPv6 `::`, `::1`,
/// `fc00::/7`, `fe80::/10`, `fec0::/10` (site-local), multicast `ff00::/8`, the local-use NAT64
/// prefix `64:ff9b:1::/48` whole, and every form that embeds an IPv4 address (see
/// [`embedded_v4`]) whose IPv4 address is private.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_private_v4(v4),
            None => {
                let [first, second, third, ..] = v6.segments();
                (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
                    || (first & 0xffc0) == 0xfec0
                    || (first & 0xff00) == 0xff00
                    // Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the
                    // prefix length the local operator chose, so none of it can be judged.
                    || [first, second, third] == [0x64, 0xff9b, 1]
            }
        },
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 0
        || a == 10
        || a == 127
        || a >= 224
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
}

/// The IPv4 address an IPv6 address stands for or leads to, for the forms that embed one in a
/// way anyone can read: IPv4-compatible `::a.b.c.d` (`::` and `::1` among them, as `0.0.0.0`
/// and `0.0.0.1`), IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765),
/// NAT64 `64:ff9b::a.b.c.d` (RFC 6052) and 6to4 `2002:aabb:ccdd::/48` (RFC 3056). `None` for
/// any other address.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = ip.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match ip.segments() {
        [0, 0, 0, 0, 0, 0 | 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(last),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

/// True for `localhost` and the names under it (`app.localhost`, RFC 6761), whatever they
/// resolve to; case and a trailing dot do not matter.
pub fn is_localhost_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// Why a destination may not be reached on an agent's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nearness {
    /// An address on a private network ([`is_private`]), or a `localhost` name.
    PrivateNetwork,
    /// An address of one of this machine's network interfaces, in no private range: a service
    /// listening on all interfaces answers there as on loopback.
    ThisMachine,
}

impl fmt::Display for Nearness {
    /// The words the human's question uses: "private network" or "this machine".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Nearness::PrivateNetwork => "private network",
            Nearness::ThisMachine => "this machine",
        })
    }
}

/// The destination of one request: the URL's host and port, the addresses it resolved to and
/// whether they are near (this machine or its networks).
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
    /// The first address that is near, and how; `None` when the destination is public. For a
    /// `localhost` name, its first address, whatever it is.
    pub near: Option<(IpAddr, Nearness)>,
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

    /// The address that makes this destination near ([`Destination::near`]), if any.
    pub fn private_ip(&self) -> Option<IpAddr> {
        self.near.map(|(ip, _)| ip)
    }
}

/// How near `ip` is, given this machine's interface addresses `own`: on a private network
/// first (loopback is that too), else this machine when it is one of `own` or embeds one.
fn nearness(ip: IpAddr, own: &[IpAddr]) -> Option<Nearness> {
    if is_private(ip) {
        return Some(Nearness::PrivateNetwork);
    }
    let v4 = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4),
        IpAddr::V4(_) => None,
    };
    (own.contains(&ip) || v4.is_some_and(|v4| own.contains(&v4))).then_some(Nearness::ThisMachine)
}

/// Checked addresses by host name, shared with the job's HTTP client.
type Pins = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

/// Resolution and pinning for one job's requests (one per task: pins are not shared).
pub struct Destinations {
    lookup: Lookup,
    interfaces: Interfaces,
    pins: Pins,
}

impl Destinations {
    /// Destinations resolved with `lookup`, judged against this machine's interfaces, with
    /// nothing pinned yet.
    pub fn new(lookup: Lookup) -> Destinations {
        Destinations::with_interfaces(lookup, system_interfaces())
    }

    /// Like [`Destinations::new`], taking this machine's addresses from `interfaces`.
    pub fn with_interfaces(lookup: Lookup, interfaces: Interfaces) -> Destinations {
        Destinations {
            lookup,
            interfaces,
            pins: Arc::default(),
        }
    }

    /// Where `url` leads. A `localhost` name that does not resolve leads to loopback
    /// (`127.0.0.1` and `::1`, RFC 6761). Errors (as text for the task's status): the URL has
    /// no host, or the name does not resolve within [`RESOLVE_TIMEOUT`], or to no address.
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
            None => {
                let found =
                    tokio::time::timeout(RESOLVE_TIMEOUT, (self.lookup)(host.clone(), port))
                        .await
                        .unwrap_or_else(|_| {
                            Err(io::Error::other(format!(
                                "no answer within {}s",
                                RESOLVE_TIMEOUT.as_secs()
                            )))
                        });
                match found {
                    Ok(addrs) if !addrs.is_empty() => addrs,
                    _ if is_localhost_name(&host) => vec![
                        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port),
                        SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port),
                    ],
                    Ok(_) => return Err(format!("{host} resolves to no address")),
                    Err(e) => return Err(format!("cannot resolve {host}: {e}")),
                }
            }
        };
        let own = (self.interfaces)();
        let near = match addrs.first() {
            Some(first) if is_localhost_name(&host) => Some((
                first.ip(),
                nearness(first.ip(), &own).unwrap_or(Nearness::PrivateNetwork),
            )),
            _ => addrs
                .iter()
                .find_map(|a| Some((a.ip(), nearness(a.ip(), &own)?))),
        };
        Ok(Destination {
            host,
            port,
            named: ip.is_none(),
            addrs,
            near,
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
            // Multicast, reserved, broadcast.
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "254.1.2.3",
            "ff02::1",
            "ff05::2",
            // Site-local (deprecated, still routed by some stacks).
            "fec0::1",
            "feff::1",
            // IPv6 forms embedding a private IPv4 address.
            "::127.0.0.1",
            "::10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:192.168.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "2002:a00:1:1::1",
            // Local-use NAT64, whatever it embeds.
            "64:ff9b:1::8.8.8.8",
            "64:ff9b:1:7f00:0:1::",
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
            "::ffff:8.8.8.8",
            "223.255.255.255",
            "::8.8.8.8",
            "::ffff:0:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "64:ff9b:2::7f00:1",
            "2002:808:808::1",
            "2001:db8::7f00:1",
            "fe00::1",
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

    /// A lookup that knows no name at all.
    fn no_names() -> Lookup {
        Arc::new(|host: String, _port: u16| {
            async move { Err(io::Error::other(format!("{host}: no such name"))) }.boxed()
        })
    }

    /// An address of one of this machine's interfaces is this machine, in whatever range it
    /// is: as a name's answer, as a literal, or embedded in an IPv6 form that leads to it.
    #[tokio::test]
    async fn this_machines_own_addresses_are_near() {
        let own: IpAddr = "203.0.113.9".parse().unwrap();
        let dests = Destinations::with_interfaces(
            rebinding(own, own),
            Arc::new(move || vec![IpAddr::V6(Ipv6Addr::LOCALHOST), own]),
        );
        let at = |u: &str| Url::parse(u).unwrap();
        for url in [
            "http://me.test:8080/",
            "http://203.0.113.9/",
            "http://[::ffff:203.0.113.9]/",
            "http://[2002:cb00:7109::1]/",
        ] {
            let dest = dests.resolve(&at(url)).await.unwrap();
            assert_eq!(
                dest.near.map(|(_, how)| how),
                Some(Nearness::ThisMachine),
                "{url}: {dest:?}"
            );
        }
        let loopback = dests.resolve(&at("http://127.0.0.1/")).await.unwrap();
        assert_eq!(
            loopback.near,
            Some(("127.0.0.1".parse().unwrap(), Nearness::PrivateNetwork)),
            "loopback stays a private network"
        );
        let other = dests.resolve(&at("http://203.0.113.10/")).await.unwrap();
        assert_eq!(other.near, None, "another machine in the same range");
    }

    /// The real interface list holds loopback, and every address on it is near.
    #[tokio::test]
    async fn the_system_interfaces_are_this_machine() {
        let own = system_interfaces()();
        assert!(own.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)), "{own:?}");
        let dests = Destinations::new(no_names());
        for ip in own {
            let url = Url::parse(&format!("http://{}/", SocketAddr::new(ip, 80))).unwrap();
            let dest = dests.resolve(&url).await.unwrap();
            assert!(dest.near.is_some(), "{ip} is this machine");
        }
    }

    /// A `localhost` name that does not resolve is loopback (RFC 6761), not an error to retry;
    /// any other name that does not resolve is one.
    #[tokio::test]
    async fn a_localhost_name_that_does_not_resolve_is_loopback() {
        let dests = Destinations::with_interfaces(no_names(), Arc::new(Vec::new));
        for url in [
            "http://app.localhost:81/x",
            "http://localhost.:81/",
            "http://A.LocalHost./",
        ] {
            let dest = dests.resolve(&Url::parse(url).unwrap()).await.unwrap();
            assert_eq!(
                dest.near,
                Some((IpAddr::V4(Ipv4Addr::LOCALHOST), Nearness::PrivateNetwork)),
                "{url}"
            );
            assert_eq!(dest.addrs.len(), 2, "127.0.0.1 and ::1");
            assert!(dest.addrs.iter().all(|a| a.ip().is_loopback()), "{dest:?}");
        }
        let unknown = dests
            .resolve(&Url::parse("http://db.example/").unwrap())
            .await;
        assert!(
            unknown
                .unwrap_err()
                .starts_with("cannot resolve db.example")
        );
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
