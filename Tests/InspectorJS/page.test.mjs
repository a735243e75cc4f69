// The page's files as a whole: what the Content-Security-Policy allows (no inline script or style, nothing
// external, no eval, no HTML built from strings), imports that resolve, every file served by InspectorAssets,
// and the data-testid hooks app.js documents actually present.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('../../Sources/KakapoInspector/Web/', import.meta.url));
const ASSETS = fileURLToPath(new URL('../../Sources/KakapoInspector/InspectorAssets.swift', import.meta.url));
const files = readdirSync(WEB);
const read = (name) => readFileSync(join(WEB, name), 'utf8');
const scripts = files.filter((name) => name.endsWith('.js'));

test('index.html has no inline script, style or handler, and loads only the page\u2019s own files', () => {
  const html = read('index.html');
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/i, 'an inline <script>');
  assert.doesNotMatch(html, /<style/i, 'a <style> element');
  assert.doesNotMatch(html, /\sstyle\s*=/i, 'a style attribute');
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'an inline event handler');
  for (const [, url] of html.matchAll(/\b(?:src|href)\s*=\s*"([^"]*)"/g)) {
    assert.ok(url.startsWith('/__kakapo/ui/') || url.startsWith('#'), `${url} is not one of the page's files`);
    if (url.startsWith('/__kakapo/ui/')) assert.ok(files.includes(url.slice('/__kakapo/ui/'.length)), `${url} does not exist`);
  }
  assert.match(html, /<script type="module" src="\/__kakapo\/ui\/app\.js"><\/script>/);
});

test('the scripts build no HTML from strings, run no strings as code and reach nothing outside Kakapo', () => {
  for (const name of scripts) {
    const code = read(name);
    for (const [pattern, what] of [
      [/\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write/, 'HTML built from a string'],
      [/\beval\s*\(|new Function\s*\(|setTimeout\(\s*['"`]|setInterval\(\s*['"`]/, 'a string run as code'],
      [/setAttribute\(\s*['"]style['"]|\.style\.cssText/, 'an inline style attribute (the CSP refuses it)'],
      [/['"`]https?:\/\//, 'an absolute URL'],
      [/\bEventSource\b(?!\s*cannot)/, 'EventSource (it cannot send the admin token)'],
    ]) {
      const lines = code.split('\n').filter((line) => !line.trimStart().startsWith('//') && !line.trimStart().startsWith('*'));
      const hit = lines.find((line) => pattern.test(line));
      assert.equal(hit, undefined, `${name}: ${what}: ${hit}`);
    }
  }
});

test('every import is a relative path to a file of the page', () => {
  for (const name of scripts) {
    for (const [, target] of read(name).matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)) {
      assert.match(target, /^\.\/[a-z-]+\.js$/, `${name} imports ${target}`);
      assert.ok(files.includes(target.slice(2)), `${name} imports ${target}, which does not exist`);
    }
  }
});

test('InspectorAssets.swift serves every file of Web/, and only those', () => {
  const swift = readFileSync(ASSETS, 'utf8');
  const listed = [...swift.matchAll(/^\s*"([a-z-]+\.[a-z]+)":/gm)].map((match) => match[1]).sort();
  assert.deepEqual(listed, [...files].sort());
});

test('the data-testid hooks app.js documents exist in the page', () => {
  const header = read('app.js').split('\n').filter((line) => line.startsWith('//')).join('\n');
  const everything = files.map(read).join('\n');
  const present = new Set([
    ...[...everything.matchAll(/data-testid="([a-z-]+)"/g)].map((match) => match[1]),
    ...[...everything.matchAll(/dataset\.testid = ['`]([a-z-]+)/g)].map((match) => match[1]),
    ...[...everything.matchAll(/dataset\.testid = `pane-\$\{key\}`/g)].flatMap(() => ['pane-interactions', 'pane-routes', 'pane-store']),
  ]);
  const hooks = [
    'tab-requests', 'tab-cassette', 'request-list', 'row', 'filter-text', 'filter-source', 'filter-status', 'filter-method',
    'filter-host', 'body-search', 'body-search-status', 'pause-toggle', 'clear-view', 'row-count', 'notes', 'connection-status',
    'server-info', 'detail', 'detail-close', 'miss-nearest', 'miss-field', 'compare-differs', 'copy-curl', 'curl-command',
    'save-cassette', 'save-result', 'cassette-row', 'cassette-detail', 'cassette-filter', 'session-picker', 'pane-interactions',
    'pane-routes', 'pane-store', 'token-dialog', 'token-input', 'token-save',
  ];
  for (const hook of hooks) {
    assert.match(header, new RegExp(`(^|[\\s,(])${hook}([\\s,)]|$)`, 'm'), `app.js does not document ${hook}`);
    assert.ok(present.has(hook), `no element has data-testid="${hook}"`);
  }
});
