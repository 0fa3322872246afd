//! Credentials that programs take as options of their own, which no name in the option says:
//! `mysql -phunter2`, `curl -u admin:hunter2`, `sshpass -p hunter2`, `redis-cli -a hunter2`,
//! `smbclient -U alice%hunter2`, `docker login -p hunter2`. [`super::secrets`] masks them in
//! command lines and argument lists with the secret-named forms (`--password x`, `TOKEN=x`)
//! it finds by name. The table follows each program's manual; an option is only read as a
//! credential after its program's name (a path's last part) in the same command, so `docker
//! run -p 80:80` and `ls -p` stay as they are.

use std::ops::Range;

/// How an option is given its value.
#[derive(Clone, Copy, PartialEq)]
enum Takes {
    /// Only in the same word: `-phunter2` (`mysql -p db` asks for the password and `db` is
    /// the database).
    Attached,
    /// In the same word or the next: `-a hunter2`, `-ahunter2`, `--user=a:b`, `--user a:b`.
    Either,
    /// Only in the next word (`openssl -k hunter2`: its `-kfile` is another option).
    Separate,
}

/// Which part of the value is the credential.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    /// All of it.
    Whole,
    /// What follows the first `char`: the password of `user:password` (curl), `user%password`
    /// (Samba), `user,password` (lftp). A value without it holds no password (the program
    /// asks for one).
    After(char),
}

/// One program's option that carries a credential.
struct CredentialOption {
    /// The program names (a path's last part) that take it.
    programs: &'static [&'static str],
    /// A word that must come between the program and the option (`docker login -p`: `-p` is a
    /// port for `docker run`).
    after: Option<&'static str>,
    option: &'static str,
    takes: Takes,
    part: Part,
}

const MYSQL: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlshow",
    "mysqlcheck",
    "mysqlpump",
    "mysqlslap",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
    "mariadb-import",
    "mariadb-show",
    "mariadb-check",
];
const MONGO: &[&str] = &[
    "mongosh",
    "mongo",
    "mongodump",
    "mongorestore",
    "mongoexport",
    "mongoimport",
    "mongostat",
    "mongotop",
    "mongofiles",
];
const LDAP: &[&str] = &[
    "ldapsearch",
    "ldapmodify",
    "ldapadd",
    "ldapdelete",
    "ldapwhoami",
    "ldappasswd",
    "ldapcompare",
    "ldapmodrdn",
    "ldapexop",
];
const SAMBA: &[&str] = &["smbclient", "rpcclient", "smbcacls", "smbget", "net"];
const CONTAINERS: &[&str] = &["docker", "podman", "nerdctl", "buildah", "skopeo", "helm"];
const RDP: &[&str] = &["xfreerdp", "wlfreerdp", "sdl-freerdp", "xfreerdp3"];

/// Every option of the table, by program.
const OPTIONS: &[CredentialOption] = &[
    option(&["curl"], None, "-u", Takes::Either, Part::After(':')),
    option(&["curl"], None, "--user", Takes::Either, Part::After(':')),
    option(&["curl"], None, "-U", Takes::Either, Part::After(':')),
    option(
        &["curl"],
        None,
        "--proxy-user",
        Takes::Either,
        Part::After(':'),
    ),
    option(MYSQL, None, "-p", Takes::Attached, Part::Whole),
    option(&["sshpass"], None, "-p", Takes::Either, Part::Whole),
    option(
        &["redis-cli", "valkey-cli"],
        None,
        "-a",
        Takes::Either,
        Part::Whole,
    ),
    option(LDAP, None, "-w", Takes::Either, Part::Whole),
    option(SAMBA, None, "-U", Takes::Either, Part::After('%')),
    option(SAMBA, None, "--user", Takes::Either, Part::After('%')),
    option(&["sqlcmd", "bcp"], None, "-P", Takes::Either, Part::Whole),
    option(MONGO, None, "-p", Takes::Either, Part::Whole),
    option(CONTAINERS, Some("login"), "-p", Takes::Either, Part::Whole),
    option(&["az"], Some("login"), "-p", Takes::Either, Part::Whole),
    option(
        &["zip", "unzip", "zipcloak"],
        None,
        "-P",
        Takes::Either,
        Part::Whole,
    ),
    option(
        &["7z", "7za", "7zz", "7zr", "rar", "unrar"],
        None,
        "-p",
        Takes::Attached,
        Part::Whole,
    ),
    option(&["ssh-keygen"], None, "-N", Takes::Either, Part::Whole),
    option(&["ssh-keygen"], None, "-P", Takes::Either, Part::Whole),
    option(&["lftp"], None, "-u", Takes::Either, Part::After(',')),
    option(&["openssl"], None, "-k", Takes::Separate, Part::Whole),
    option(RDP, None, "/p:", Takes::Attached, Part::Whole),
];

const fn option(
    programs: &'static [&'static str],
    after: Option<&'static str>,
    option: &'static str,
    takes: Takes,
    part: Part,
) -> CredentialOption {
    CredentialOption {
        programs,
        after,
        option,
        takes,
        part,
    }
}

/// `line` (a shell command line) with each option credential in it replaced by `with`, also
/// inside a quoted word that is a command of its own (`sh -c 'mysql -pX'`, `ssh host "mysql
/// -pX"`); `None` when it holds none.
pub(super) fn mask_options(line: &str, with: &str) -> Option<String> {
    let spans = shell_words(line);
    let words: Vec<Option<&str>> = spans.iter().map(|s| s.clone().map(|r| &line[r])).collect();
    let found: std::collections::HashMap<usize, Range<usize>> =
        credentials(&words).into_iter().collect();
    let mut masks: Vec<(Range<usize>, String)> = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        let Some(span) = span else { continue };
        if let Some(r) = found.get(&i) {
            let range = span.start + r.start..span.start + r.end;
            if super::secrets::hideable(&line[range.clone()]) {
                masks.push((range, with.to_string()));
            }
            continue;
        }
        let word = &line[span.clone()];
        let inner = unquote(word);
        if inner.len() < word.len()
            && inner.contains(char::is_whitespace)
            && let Some(shown) = mask_options(inner, with)
        {
            masks.push((span.start + 1..span.end - 1, shown));
        }
    }
    if masks.is_empty() {
        return None;
    }
    // Written front to back: replacing each range in place would move the rest of the line
    // once per mask.
    let mut out = String::with_capacity(line.len());
    let mut copied = 0;
    for (range, shown) in masks {
        out.push_str(&line[copied..range.start]);
        out.push_str(&shown);
        copied = range.end;
    }
    out.push_str(&line[copied..]);
    Some(out)
}

/// The credentials in `words`, one command's words as written (quotes kept; `None` for an
/// operator that ends a command: `;`, `|`, `&&`, a newline): for each, the index of its word
/// and its byte range in that word (a quoted value's quotes left out).
pub(super) fn credentials(words: &[Option<&str>]) -> Vec<(usize, Range<usize>)> {
    let mut found = Vec::new();
    // The program whose options the words are, and the words since it.
    let mut program: Option<&str> = None;
    let mut since: std::collections::HashSet<&str> = Default::default();
    let mut i = 0;
    while i < words.len() {
        let Some(word) = words[i] else {
            (program, i) = (None, i + 1);
            since.clear();
            continue;
        };
        let bare = unquote(word);
        let name = bare.rsplit('/').next().unwrap_or(bare);
        if OPTIONS.iter().any(|o| o.programs.contains(&name)) {
            (program, i) = (Some(name), i + 1);
            since.clear();
            continue;
        }
        let Some(current) = program else {
            i += 1;
            continue;
        };
        let next = words.get(i + 1).copied().flatten();
        // A quoted option (`mysql "-phunter2"`) is the option the shell hands the program.
        let shift = usize::from(bare.len() < word.len());
        let mut taken = None;
        for o in OPTIONS
            .iter()
            .filter(|o| o.programs.contains(&current) && o.after.is_none_or(|a| since.contains(&a)))
        {
            taken = value_of(o, bare, next).map(|v| match v {
                Value::Here(r) => Value::Here(r.start + shift..r.end + shift),
                other => other,
            });
            if taken.is_some() {
                break;
            }
        }
        match taken {
            Some(Value::Here(range)) => {
                found.push((i, range));
                i += 1;
            }
            Some(Value::Next(range)) => {
                found.push((i + 1, range));
                i += 2;
            }
            // The option without its password: the program asks for it.
            Some(Value::None) => i += 1,
            None => {
                since.insert(bare);
                i += 1;
            }
        }
    }
    found
}

/// Where an option's value is.
enum Value {
    /// In the option's own word, at this range.
    Here(Range<usize>),
    /// In the next word, at this range.
    Next(Range<usize>),
    /// It holds no credential.
    None,
}

/// The value `o` has in `word` (or the word after it, `next`), `None` when `word` is not `o`.
fn value_of(o: &CredentialOption, word: &str, next: Option<&str>) -> Option<Value> {
    let short = !o.option.starts_with("--") && o.option.starts_with('-') && o.option.len() == 2;
    let separate = |next: Option<&str>| match next {
        Some(n) if !n.starts_with('-') => Some(part(o.part, n, 0).map_or(Value::None, Value::Next)),
        _ => Some(Value::None),
    };
    if word == o.option {
        return match o.takes {
            Takes::Either | Takes::Separate => separate(next),
            Takes::Attached => Some(Value::None),
        };
    }
    if o.takes == Takes::Separate {
        return None;
    }
    if let Some(value) = word.strip_prefix(o.option) {
        let at = o.option.len();
        if o.option.starts_with("--") {
            return value
                .strip_prefix('=')
                .map(|_| part(o.part, &word[at + 1..], at + 1).map_or(Value::None, Value::Here));
        }
        return Some(part(o.part, value, at).map_or(Value::None, Value::Here));
    }
    // Short options run together, the one taking a value last: `curl -sSu admin:pw`.
    if short && o.takes == Takes::Either {
        let letter = &o.option[1..];
        let flags = word.strip_prefix('-')?.strip_suffix(letter)?;
        if !flags.is_empty() && flags.chars().all(|c| c.is_ascii_alphabetic()) {
            return separate(next);
        }
    }
    None
}

/// The range of the credential in `value` (at byte `offset` of its word), its quotes left
/// out; `None` when it is empty, or `part` is `After` a character `value` lacks.
fn part(part: Part, value: &str, offset: usize) -> Option<Range<usize>> {
    let quoted = value.len() >= 2
        && matches!(value.as_bytes()[0], b'\'' | b'"')
        && value.as_bytes()[value.len() - 1] == value.as_bytes()[0];
    let (mut start, end) = match quoted {
        true => (1, value.len() - 1),
        false => (0, value.len()),
    };
    if let Part::After(c) = part {
        start += value[start..end].find(c)? + c.len_utf8();
    }
    (start < end).then(|| offset + start..offset + end)
}

/// `word` without the quotes around it, if it has them.
fn unquote(word: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = word.strip_prefix(q).and_then(|w| w.strip_suffix(q)) {
            return inner;
        }
    }
    word
}

/// The words of a shell command `line` as byte ranges, `None` for each operator that ends a
/// command (`;`, `|`, `&`, `(`, `)`, a backquote, a newline). Quotes and backslashes hold a
/// word together as the shell's do; a quote never closed is taken as a character (prose's
/// apostrophe).
pub(super) fn shell_words(line: &str) -> Vec<Option<Range<usize>>> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let ends_command = matches!(c, ';' | '|' | '&' | '(' | ')' | '`' | '\n');
        // A backslash before a newline continues the line: it separates words as a space does.
        let continues = c == '\\' && chars.peek().is_some_and(|&(_, d)| d == '\n');
        if continues {
            chars.next();
        }
        if c.is_whitespace() || ends_command || continues {
            if let Some(s) = start.take() {
                words.push(Some(s..at));
            }
            if ends_command {
                words.push(None);
            }
            continue;
        }
        start.get_or_insert(at);
        match c {
            '\\' => {
                chars.next();
            }
            // A quote that never closes is an apostrophe of prose ("don't run ..."), not a
            // quote: the words after it stay words.
            '\'' if line[at + 1..].contains('\'') => {
                for (_, d) in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                }
            }
            '"' if line[at + 1..].contains('"') => {
                while let Some((_, d)) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push(Some(s..line.len()));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `line` with its option credentials replaced by `*`.
    fn masked(line: &str) -> String {
        mask_options(line, "*").unwrap_or_else(|| line.to_string())
    }

    #[test]
    fn programs_own_credential_options_are_found() {
        for (given, shown) in [
            ("mysql -u root -phunter2 app", "mysql -u root -p* app"),
            ("mysql -u root -p app", "mysql -u root -p app"),
            (
                "/usr/bin/mysqldump -p'a b' db",
                "/usr/bin/mysqldump -p'*' db",
            ),
            ("curl -u admin:s3 https://x", "curl -u admin:* https://x"),
            ("curl -sSu admin:s3 x", "curl -sSu admin:* x"),
            ("curl --user=admin:s3 x", "curl --user=admin:* x"),
            ("curl --user 'admin:s 3' x", "curl --user 'admin:*' x"),
            ("curl -uadmin:s3 x", "curl -uadmin:* x"),
            ("curl -u admin https://x", "curl -u admin https://x"),
            ("docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"),
            (
                "docker login -u me -p s3 ghcr.io",
                "docker login -u me -p * ghcr.io",
            ),
            ("sshpass -p 'hunter 2' ssh host", "sshpass -p '*' ssh host"),
            (
                "smbclient //srv/share -U alice%pw",
                "smbclient //srv/share -U alice%*",
            ),
            ("redis-cli -a s3 ping", "redis-cli -a * ping"),
            (
                "ldapsearch -x -D cn=admin -w s3 -b dc=x",
                "ldapsearch -x -D cn=admin -w * -b dc=x",
            ),
            ("sudo -u root mysql -p123456", "sudo -u root mysql -p*"),
            (
                "ls -p; mysql -pX | grep -p y",
                "ls -p; mysql -p* | grep -p y",
            ),
            (
                "zip -P s3 a.zip f && 7z a -ps4 x.7z",
                "zip -P * a.zip f && 7z a -p* x.7z",
            ),
            ("ssh host \"mysql -pX db\"", "ssh host \"mysql -p* db\""),
            ("sh -c 'curl -u a:b x; ls'", "sh -c 'curl -u a:* x; ls'"),
            ("ssh host mysql -pX db", "ssh host mysql -p* db"),
            (
                "xfreerdp /u:bob /p:s3 /v:host",
                "xfreerdp /u:bob /p:* /v:host",
            ),
            ("lftp -u bob,s3 ftp.x", "lftp -u bob,* ftp.x"),
            ("echo -p s3", "echo -p s3"),
            ("mysql \"-ps3\" db", "mysql \"-p*\" db"),
            ("mysql\\\n -ps3 db", "mysql\\\n -p* db"),
            (
                "don't run curl -u admin:s3 here",
                "don't run curl -u admin:* here",
            ),
            ("it's: mysql -ps3 db", "it's: mysql -p* db"),
            (
                "openssl enc -kfile key.txt -in a && openssl enc -k s3 -in a",
                "openssl enc -kfile key.txt -in a && openssl enc -k * -in a",
            ),
        ] {
            assert_eq!(masked(given), shown, "{given}");
        }
    }

    #[test]
    fn words_are_split_as_the_shell_does() {
        let line = "a 'b c' \"d \\\" e\" f\\ g;h|i";
        let words: Vec<Option<&str>> = shell_words(line)
            .into_iter()
            .map(|w| w.map(|r| &line[r]))
            .collect();
        assert_eq!(
            words,
            [
                Some("a"),
                Some("'b c'"),
                Some("\"d \\\" e\""),
                Some("f\\ g"),
                None,
                Some("h"),
                None,
                Some("i")
            ]
        );
    }
}
