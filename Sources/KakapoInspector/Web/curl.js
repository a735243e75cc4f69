// curl.js: a request's detail -> a curl command that sends it to Kakapo again. Pure (no DOM), tested in
// Tests/InspectorJS/curl.test.mjs, which runs the commands it makes through sh.
//
// - An origin-form request (target "/users/1") goes to the proxy port's origin, where Kakapo listens; a Host header
//   that named another host is kept, since Kakapo may route by it.
// - An absolute-form request (Kakapo as a forward proxy, target "http://api.example.com/users/1") goes through
//   Kakapo with -x; an https URL that Kakapo intercepted goes the same way and trusts Kakapo's CA.
// - Every argument is single-quoted (nothing inside single quotes is special to sh), bodies go as
//   --data-binary, binary bodies through base64 -d, and headers that describe the connection rather than the
//   request (hop-by-hop ones, Content-Length, which curl computes) are left out.

/** Headers that belong to one connection (RFC 9110 7.6.1) or that curl must compute itself. */
export const SKIPPED_HEADERS = Object.freeze(
  new Set([
    'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
    'content-length', 'expect',
  ]),
);

/** `text` as one sh word: single-quoted, with each ' written as '\''. */
export function shellQuote(text) {
  const value = String(text);
  if (/^[A-Za-z0-9_@%+=:,./][A-Za-z0-9_@%+=:,./-]*$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const ABSOLUTE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;

function authorityOf(url) {
  const match = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(url);
  return match ? match[1].replace(/^[^@]*@/, '') : '';
}

function schemeOf(url) {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(url);
  return match ? match[1].toLowerCase() : '';
}

/**
 * The curl command for `detail` (GET /__kakapo/requests/{id}, or an event when the detail is gone), sent to
 * Kakapo at `origin` (the proxy port's origin: the page itself is on the admin listener). Returns the command as one string; long commands are
 * broken over lines with backslash-newline.
 */
export function curlCommand(detail, origin) {
  const request = detail?.request ?? {};
  const method = String(request.method ?? detail?.method ?? 'GET');
  const target = String(request.target ?? detail?.target ?? '/');
  const url = String(request.url ?? detail?.url ?? '');
  const headers = Array.isArray(request.headers) ? request.headers : [];
  const body = request.body && typeof request.body === 'object' ? request.body : null;
  const base = String(origin ?? '').replace(/\/+$/, '');

  const words = ['curl'];
  const pre = [];
  const notes = [];
  let destination;
  let viaProxy = false;
  if (ABSOLUTE.test(target)) {
    destination = target;
    viaProxy = true;
  } else if (schemeOf(url) === 'https' && authorityOf(url) !== authorityOf(base) && ABSOLUTE.test(url)) {
    // An https request Kakapo intercepted inside a CONNECT tunnel: the same URL through the proxy again.
    destination = url;
    viaProxy = true;
  } else {
    destination = base + (target.startsWith('/') ? target : `/${target}`);
  }
  if (viaProxy) {
    words.push('-x', shellQuote(base));
    if (schemeOf(destination) === 'https') words.push('--cacert', '"$(kakapo ca path)"');
  }

  if (method === 'HEAD') words.push('--head');
  else if (method !== 'GET' || (body && body.size > 0)) words.push('-X', shellQuote(method));

  const destinationHost = authorityOf(destination).toLowerCase();
  let hasContentType = false;
  let hasSession = false;
  for (const pair of headers) {
    if (!Array.isArray(pair) || pair.length < 2) continue;
    const name = String(pair[0]);
    const value = String(pair[1]);
    const lower = name.toLowerCase();
    if (SKIPPED_HEADERS.has(lower)) continue;
    if (lower === 'host') {
      if (value.toLowerCase() === destinationHost || viaProxy) continue;
    }
    if (lower === 'content-type') hasContentType = true;
    if (lower === 'x-kakapo-session') hasSession = true;
    // curl sends "Name:" with an empty value as a removal; "Name;" sends it empty.
    words.push('-H', shellQuote(value === '' ? `${name};` : `${name}: ${value}`));
  }
  if (typeof detail?.session === 'string' && detail.session !== '' && !hasSession) {
    // Kakapo took the session header out before journaling; without it the request would miss the session.
    words.push('-H', shellQuote(`X-Kakapo-Session: ${detail.session}`));
  }

  if (body && (typeof body.text === 'string' || typeof body.base64 === 'string') && body.size !== 0) {
    if (!hasContentType) words.push('-H', shellQuote('Content-Type:'));
    if (body.truncated) notes.push(`# the body was cut: ${body.kept} of ${body.size} bytes kept`);
    if (typeof body.text === 'string' && !body.text.includes('\u0000')) {
      words.push('--data-binary', shellQuote(body.text));
    } else {
      const base64 = typeof body.base64 === 'string' ? body.base64 : encodeBase64(body.text);
      pre.push(`printf '%s' ${shellQuote(base64)} | base64 -d |`);
      words.push('--data-binary', '@-');
    }
  }

  if (/[[\]{}]/.test(destination)) words.push('--globoff');
  if (/\/\.\.?(\/|$|\?)/.test(destination.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//, ''))) words.push('--path-as-is');
  words.push(shellQuote(destination));
  return [...notes, [...pre, joinWords(words)].join(' ')].join('\n');
}

// Breaks before each option so a long command reads one option a line; each break is " \" + newline.
function joinWords(words) {
  const lines = [];
  let line = words[0];
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index];
    if (word.startsWith('-') && !word.startsWith("'") && line !== words[0]) {
      lines.push(line);
      line = word;
    } else {
      line += ` ${word}`;
    }
  }
  lines.push(line);
  return lines.join(' \\\n  ');
}

function encodeBase64(text) {
  const bytes = new TextEncoder().encode(String(text ?? ''));
  let binary = '';
  for (let index = 0; index < bytes.length; index += 1) binary += String.fromCharCode(bytes[index]);
  return btoa(binary);
}
