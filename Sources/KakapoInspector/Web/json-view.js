// json-view.js: JSON shown pretty and collapsible. The model half (parsing without losing big numbers, JSON
// pointers, summaries) is pure and tested in Tests/InspectorJS/json-view.test.mjs; the view half builds DOM
// with textContent only (bodies are hostile), opens children lazily, and shows big containers in pages of 200,
// so a 1 MiB body does not freeze the page.

/** A number whose text does not survive a double (12345678901234567890): kept as written. */
export class LosslessNumber {
  constructor(source) {
    this.source = source;
  }

  toString() {
    return this.source;
  }
}

/**
 * Parses JSON text; `{ok: true, value}` or `{ok: false, error}`. Integers beyond 2^53 and numbers whose text
 * would change keep their text (as LosslessNumber) where the browser tells the reviver the source
 * (Chromium 114+, Firefox 135+); elsewhere they are parsed as doubles.
 */
export function parseJSON(text) {
  try {
    const value = JSON.parse(String(text), function revive(key, value, context) {
      if (typeof value === 'number' && context && typeof context.source === 'string') {
        if (String(value) !== context.source && !sameNumberText(value, context.source)) {
          return new LosslessNumber(context.source);
        }
      }
      return value;
    });
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error: String(error?.message ?? error) };
  }
}

// 1.0 and 1e2 are the numbers 1 and 100 exactly: only a change of value needs the source kept.
function sameNumberText(value, source) {
  if (!/^-?\d+$/.test(source)) return Number(source) === value && Math.abs(value) < 2 ** 53;
  return Number.isSafeInteger(value);
}

/** Whether `contentType` (or the text's first character, when there is no type) says JSON. */
export function looksLikeJSON(contentType, text) {
  const type = String(contentType ?? '').toLowerCase().split(';')[0].trim();
  if (type === 'application/json' || type.endsWith('+json') || type === 'text/json') return true;
  if (type === '' || type === 'text/plain' || type === 'application/octet-stream') {
    const first = String(text ?? '').trimStart()[0];
    return first === '{' || first === '[';
  }
  return false;
}

/** 'object', 'array', 'string', 'number', 'boolean' or 'null'. */
export function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof LosslessNumber) return 'number';
  const type = typeof value;
  if (type === 'object') return 'object';
  if (type === 'number' || type === 'string' || type === 'boolean') return type;
  return 'null';
}

/** The children of a container as [key, value] pairs (array indices as numbers). */
export function childrenOf(value) {
  if (Array.isArray(value)) return value.map((child, index) => [index, child]);
  if (kindOf(value) === 'object') return Object.keys(value).map((key) => [key, value[key]]);
  return [];
}

/** "{3}" style summary of a container for its collapsed line: "{ 3 keys }", "[ 10 items ]". */
export function summaryOf(value) {
  const kind = kindOf(value);
  if (kind === 'array') return `[ ${value.length} ${value.length === 1 ? 'item' : 'items'} ]`;
  if (kind === 'object') {
    const count = Object.keys(value).length;
    return `{ ${count} ${count === 1 ? 'key' : 'keys'} }`;
  }
  return scalarText(value);
}

/** A scalar as JSON writes it ("text" quoted, numbers as written). */
export function scalarText(value) {
  if (value instanceof LosslessNumber) return value.source;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/** The pointer of `key` under `parent` (RFC 6901: ~ is ~0, / is ~1). */
export function childPointer(parent, key) {
  return `${parent}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** The tokens of a pointer, unescaped; null for a string that is not a pointer. */
export function pointerTokens(pointer) {
  if (pointer === '') return [];
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return null;
  return pointer.slice(1).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The deepest pointer of `pointer` that exists in `value` ("/user/name" when it exists, "/user" when only the
 * object holding it does): where a view marks a field the other side lacks.
 */
export function deepestExisting(value, pointer) {
  const tokens = pointerTokens(pointer);
  if (!tokens) return '';
  let node = value;
  let reached = '';
  for (const token of tokens) {
    const kind = kindOf(node);
    if (kind === 'array' && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) node = node[Number(token)];
    else if (kind === 'object' && Object.prototype.hasOwnProperty.call(node, token)) node = node[token];
    else break;
    reached = childPointer(reached, token);
  }
  return reached;
}

/** Every proper ancestor of each pointer ("/a/b" -> "", "/a"), to open them so a marked field shows. */
export function ancestorPointers(pointers) {
  const result = new Set();
  for (const pointer of pointers) {
    const tokens = pointerTokens(pointer);
    if (!tokens) continue;
    let current = '';
    result.add(current);
    for (const token of tokens.slice(0, -1)) {
      current = childPointer(current, token);
      result.add(current);
    }
  }
  return result;
}

const PAGE = 200;

/**
 * A collapsible view of `value`. Options: `open` (depth opened at first, default 2), `marks` (a Map from
 * pointer to a title: those nodes are marked as differing, and their ancestors open).
 */
export function renderJSON(value, { open = 2, marks = new Map() } = {}) {
  const root = document.createElement('div');
  root.className = 'json';
  root.setAttribute('role', 'tree');
  // A field one side lacks marks the deepest node that side has (the object it would be in).
  const resolved = new Map();
  for (const [pointer, title] of marks) {
    const at = deepestExisting(value, pointer);
    if (!resolved.has(at)) resolved.set(at, at === pointer ? title : `${title} (absent here)`);
  }
  const context = { open, marks: resolved, ancestors: ancestorPointers(resolved.keys()) };
  root.append(renderNode(null, value, '', 0, context));
  return root;
}

function renderNode(key, value, pointer, depth, context) {
  const kind = kindOf(value);
  const mark = context.marks.get(pointer);
  if (kind !== 'object' && kind !== 'array') {
    const line = document.createElement('div');
    line.className = 'json-line';
    line.setAttribute('role', 'treeitem');
    if (key !== null) line.append(keyLabel(key));
    const scalar = document.createElement('span');
    scalar.className = `json-${kind}`;
    scalar.textContent = scalarText(value);
    line.append(scalar);
    markNode(line, mark);
    return line;
  }
  const details = document.createElement('details');
  details.className = 'json-node';
  details.setAttribute('role', 'treeitem');
  const summary = document.createElement('summary');
  if (key !== null) summary.append(keyLabel(key));
  const count = document.createElement('span');
  count.className = 'json-summary';
  count.textContent = summaryOf(value);
  summary.append(count);
  details.append(summary);
  markNode(details, mark);
  const children = document.createElement('div');
  children.className = 'json-children';
  children.setAttribute('role', 'group');
  details.append(children);
  let rendered = false;
  const fill = () => {
    if (rendered) return;
    rendered = true;
    appendChildren(children, childrenOf(value), 0, pointer, depth, context);
  };
  details.addEventListener('toggle', () => {
    if (details.open) fill();
  });
  if (depth < context.open || context.ancestors.has(pointer)) {
    details.open = true;
    fill();
  }
  return details;
}

function appendChildren(container, entries, from, pointer, depth, context) {
  const end = Math.min(entries.length, from + PAGE);
  // A marked child beyond the first page is rendered too, so a difference at /items/950 is never hidden.
  for (let index = from; index < end; index += 1) {
    const [key, child] = entries[index];
    container.append(renderNode(key, child, childPointer(pointer, key), depth + 1, context));
  }
  if (end < entries.length) {
    const more = document.createElement('button');
    more.type = 'button';
    more.className = 'json-more';
    more.textContent = `show ${Math.min(PAGE, entries.length - end)} more of ${entries.length - end}`;
    const early = [];
    more.addEventListener('click', () => {
      more.remove();
      for (const element of early) element.remove();
      appendChildren(container, entries, end, pointer, depth, context);
    });
    container.append(more);
    const hiddenMarked = entries.slice(end).filter(([key]) => {
      const childPath = childPointer(pointer, key);
      return context.marks.has(childPath) || context.ancestors.has(childPath);
    });
    for (const [key, child] of hiddenMarked) {
      const note = document.createElement('div');
      note.className = 'json-skipped';
      note.textContent = '…';
      const node = renderNode(key, child, childPointer(pointer, key), depth + 1, context);
      early.push(note, node);
      container.append(note, node);
    }
  }
}

function keyLabel(key) {
  const label = document.createElement('span');
  label.className = typeof key === 'number' ? 'json-index' : 'json-key';
  label.textContent = typeof key === 'number' ? `${key}: ` : `${JSON.stringify(key)}: `;
  return label;
}

function markNode(element, mark) {
  if (mark === undefined) return;
  element.classList.add('json-marked');
  if (mark) element.title = mark;
}

/** The JSON re-indented with two spaces (big numbers as written), for "copy" and the raw view. */
export function prettyText(value) {
  return JSON.stringify(
    value,
    (key, child) => (child instanceof LosslessNumber ? `\u0000num:${child.source}\u0000` : child),
    2,
  ).replace(/"\\u0000num:([^\\"]*)\\u0000"/g, '$1');
}
