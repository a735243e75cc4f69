// miss-view.js: why a request missed. Each nearest recording is listed with its differences, one item per
// field (data-testid="miss-field"); the closest one is compared side by side with the request (its recording
// fetched from GET /__kakapo/cassette/{n}?session=..), with the differing method, host, path, query parameters,
// headers and JSON body fields marked. Everything from the wire is shown with textContent.

import { getJSON } from './api.js';
import { contentTypeOf, renderBody } from './body-view.js';
import { truncate } from './format.js';

/** The label of one structured difference: "query page", "header accept", "body /user/name". */
export function fieldLabel(field) {
  const part = String(field?.part ?? 'other');
  if (part === 'body') return `body ${field.pointer ?? ''}`.trim();
  if (part === 'other') return String(field.text ?? 'other');
  if (field.name !== undefined) return `${part} ${field.name}`;
  return part;
}

/** The key of the comparison row a field marks ("query:page", "header:accept", "method"). */
export function fieldKey(field) {
  const part = String(field?.part ?? '');
  if (part === 'query') return `query:${field.name ?? ''}`;
  if (part === 'header') return `header:${String(field.name ?? '').toLowerCase()}`;
  return part;
}

/** The query parameters of a target as [name, value] pairs, decoded ("+" stays "+"; undecodable stays raw). */
export function queryPairs(target) {
  const text = String(target ?? '');
  const question = text.indexOf('?');
  if (question < 0) return [];
  const hash = text.indexOf('#', question);
  const query = text.slice(question + 1, hash < 0 ? undefined : hash);
  if (query === '') return [];
  return query.split('&').filter((part) => part !== '').map((part) => {
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    const value = equals < 0 ? '' : part.slice(equals + 1);
    return [decode(name), decode(value)];
  });
}

function decode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The path of a target or URL without its query. */
export function pathPart(targetOrURL) {
  let text = String(targetOrURL ?? '');
  const absolute = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(text);
  if (absolute) text = text.slice(absolute[0].length) || '/';
  const end = text.search(/[?#]/);
  return end < 0 ? text : text.slice(0, end);
}

/**
 * The rows of a side-by-side comparison of two requests ({method, target, url, headers}), each {key, label,
 * here, recorded}; `undefined` on a side means the side does not have it.
 */
export function comparisonRows(here, recorded) {
  const rows = [];
  rows.push({ key: 'method', label: 'method', here: here.method, recorded: recorded.method });
  rows.push({ key: 'host', label: 'host', here: hostPart(here.url), recorded: hostPart(recorded.url) });
  rows.push({
    key: 'path', label: 'path', here: pathPart(here.target ?? here.url), recorded: pathPart(recorded.target ?? recorded.url),
  });
  const hereQuery = groupPairs(queryPairs(here.target ?? here.url));
  const recordedQuery = groupPairs(queryPairs(recorded.target ?? recorded.url));
  for (const name of unionKeys(hereQuery, recordedQuery)) {
    rows.push({ key: `query:${name}`, label: `?${name}`, here: hereQuery.get(name), recorded: recordedQuery.get(name) });
  }
  const hereHeaders = groupPairs(headerPairs(here.headers), true);
  const recordedHeaders = groupPairs(headerPairs(recorded.headers), true);
  for (const name of unionKeys(hereHeaders, recordedHeaders)) {
    rows.push({
      key: `header:${name}`, label: name, here: hereHeaders.get(name), recorded: recordedHeaders.get(name), header: true,
    });
  }
  return rows;
}

function hostPart(url) {
  const match = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(String(url ?? ''));
  return match ? match[1] : undefined;
}

function headerPairs(headers) {
  return Array.isArray(headers) ? headers.filter((pair) => Array.isArray(pair) && pair.length >= 2) : [];
}

// Repeated names are joined with ", " as HTTP does; header names compare without case.
function groupPairs(pairs, lowercase = false) {
  const map = new Map();
  for (const [rawName, value] of pairs) {
    const name = lowercase ? String(rawName).toLowerCase() : String(rawName);
    map.set(name, map.has(name) ? `${map.get(name)}, ${value}` : String(value));
  }
  return map;
}

function unionKeys(first, second) {
  const keys = [...first.keys()];
  for (const key of second.keys()) if (!first.has(key)) keys.push(key);
  return keys;
}

/** The miss section of a detail: `detail.miss` with its nearest recordings. */
export function renderMiss(detail, { release = [] } = {}) {
  const miss = detail.miss ?? {};
  const section = document.createElement('section');
  section.className = 'miss';
  section.dataset.testid = 'miss-nearest';
  const title = document.createElement('h3');
  title.textContent = 'Why it missed';
  section.append(title);
  const where = document.createElement('p');
  where.className = 'muted';
  where.textContent = miss.cassette
    ? `No interaction of ${miss.cassette}${miss.session ? ` (session ${miss.session})` : ''} matched this request.`
    : 'No recording matched this request.';
  section.append(where);
  const nearest = Array.isArray(miss.nearest) ? miss.nearest : [];
  if (nearest.length === 0) {
    const none = document.createElement('p');
    none.textContent = 'Nothing recorded is close to it (no interaction with this method and host).';
    section.append(none);
    return section;
  }
  nearest.forEach((candidate, position) => {
    section.append(renderCandidate(detail, candidate, position === 0, miss.session ?? detail.session, release));
  });
  return section;
}

function renderCandidate(detail, candidate, openFirst, session, release) {
  const box = document.createElement('details');
  box.className = 'nearest';
  box.open = openFirst;
  const summary = document.createElement('summary');
  const number = Number.isSafeInteger(candidate.interaction) ? candidate.interaction : null;
  const label = document.createElement('span');
  label.className = 'nearest-title';
  label.textContent = `Interaction ${number ?? '?'}: ${truncate(candidate.method ?? '', 12)} ${truncate(candidate.url ?? '', 300)}`;
  const count = document.createElement('span');
  count.className = 'pill';
  const fields = Array.isArray(candidate.fields) ? candidate.fields : [];
  const differences = Array.isArray(candidate.differences) ? candidate.differences : [];
  const total = Math.max(fields.length, differences.length);
  count.textContent = `${total} ${total === 1 ? 'difference' : 'differences'}`;
  summary.append(label, ' ', count);
  box.append(summary);

  const list = document.createElement('ul');
  list.className = 'differences';
  if (fields.length > 0) {
    fields.forEach((field, index) => list.append(fieldItem(field, differences[index])));
  } else {
    for (const text of differences) {
      const item = document.createElement('li');
      item.dataset.testid = 'miss-field';
      item.textContent = String(text);
      list.append(item);
    }
  }
  box.append(list);

  const compare = document.createElement('div');
  compare.className = 'compare';
  box.append(compare);
  let loaded = false;
  const load = () => {
    if (loaded || number === null) return;
    loaded = true;
    loadComparison(compare, detail, number, session, fields, release);
  };
  box.addEventListener('toggle', () => {
    if (box.open) load();
  });
  if (openFirst) load();
  return box;
}

function fieldItem(field, sentence) {
  const item = document.createElement('li');
  item.dataset.testid = 'miss-field';
  item.dataset.part = String(field?.part ?? 'other');
  const name = document.createElement('span');
  name.className = 'field-name';
  name.textContent = fieldLabel(field);
  item.append(name);
  if (field?.here !== undefined || field?.recorded !== undefined) item.append(' ', valuePair(field.here, field.recorded));
  // The server's sentence says the same in words: kept as the item's title rather than said twice.
  if (typeof sentence === 'string') item.title = truncate(sentence, 1000);
  return item;
}

function valuePair(here, recorded) {
  const wrapper = document.createElement('span');
  wrapper.className = 'value-pair';
  const a = document.createElement('code');
  a.className = 'here';
  a.textContent = here === undefined || here === null ? '(absent)' : truncate(String(here), 300);
  const b = document.createElement('code');
  b.className = 'recorded';
  b.textContent = recorded === undefined || recorded === null ? '(absent)' : truncate(String(recorded), 300);
  wrapper.append('here ', a, ' recorded ', b);
  return wrapper;
}

async function loadComparison(container, detail, number, session, fields, release) {
  container.textContent = 'Loading the recording…';
  const query = session ? `?session=${encodeURIComponent(session)}` : '';
  let recording;
  try {
    recording = await getJSON(`/__kakapo/cassette/${number}${query}`);
  } catch (error) {
    container.textContent = `The recording could not be loaded: ${error.message}`;
    return;
  }
  container.textContent = '';
  const here = detail.request ?? { method: detail.method, target: detail.target, url: detail.url, headers: [] };
  const recorded = recording.request ?? {};
  const marked = new Map();
  const bodyMarks = [];
  for (const field of fields) {
    if (field?.part === 'body' && typeof field.pointer === 'string') bodyMarks.push(field.pointer);
    else marked.set(fieldKey(field), field);
  }
  const table = document.createElement('table');
  table.className = 'comparison';
  const head = table.createTHead().insertRow();
  for (const text of ['', 'This request', `Recorded (interaction ${number})`]) {
    const th = document.createElement('th');
    th.textContent = text;
    head.append(th);
  }
  const body = table.createTBody();
  const onlyDifferences = document.createElement('label');
  onlyDifferences.className = 'toggle';
  const checkbox = document.createElement('input');
  checkbox.type = 'checkbox';
  checkbox.checked = true;
  onlyDifferences.append(checkbox, ' only the headers the matching compared differently');
  const rows = comparisonRows(here, recorded);
  const headerRows = [];
  for (const row of rows) {
    const tr = body.insertRow();
    // What Kakapo's matching named is marked; other values that are not equal (a header the matching
    // ignores, a recording without a host) are only set apart, since they did not cause the miss.
    const differs = marked.has(row.key);
    const unequal = !differs && row.here !== undefined && row.recorded !== undefined && row.here !== row.recorded;
    if (differs) {
      tr.className = 'differs';
      tr.dataset.testid = 'compare-differs';
      tr.title = 'Kakapo\u2019s matching found this different';
    } else if (unequal) {
      tr.className = 'unequal';
      tr.title = 'not equal, but not what made the request miss (the matching ignores it)';
    }
    const name = document.createElement('th');
    name.scope = 'row';
    name.textContent = row.label;
    tr.append(name, cell(row.here), cell(row.recorded));
    if (row.header && !differs) headerRows.push(tr);
  }
  const syncHeaders = () => {
    for (const tr of headerRows) tr.hidden = checkbox.checked;
  };
  checkbox.addEventListener('change', syncHeaders);
  syncHeaders();
  container.append(onlyDifferences, table);

  const hereBody = here.body;
  const recordedBody = recorded.body;
  if ((hereBody && hereBody.size > 0) || (recordedBody && recordedBody.size > 0) || bodyMarks.length > 0) {
    const bodies = document.createElement('div');
    bodies.className = 'side-by-side';
    const marks = new Map(bodyMarks.map((pointer) => [pointer, `differs at ${pointer}`]));
    bodies.append(
      sideBody('This request\u2019s body', hereBody, contentTypeOf(here.headers), marks, release),
      sideBody('Recorded body', recordedBody, contentTypeOf(recorded.headers), marks, release),
    );
    container.append(bodies);
  }
}

function cell(value) {
  const td = document.createElement('td');
  if (value === undefined || value === null) {
    td.className = 'absent';
    td.textContent = '(absent)';
  } else {
    td.textContent = truncate(String(value), 4000);
  }
  return td;
}

function sideBody(title, body, contentType, marks, release) {
  const column = document.createElement('div');
  const heading = document.createElement('h4');
  heading.textContent = title;
  column.append(heading, renderBody(body, contentType, { marks, release }));
  return column;
}
