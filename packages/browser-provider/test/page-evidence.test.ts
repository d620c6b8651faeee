import { describe, expect, it } from 'vitest';
import { flattenAriaTree, type PageObservation, pageEvidenceKey, refuseBeforeNavigation } from '../src/index';

const page: PageObservation = {
  url: 'https://example.com/a',
  title: 'A',
  text: 'Hello',
  elements: [
    { role: 'heading', name: 'Hello', state: { level: 1 } },
    { role: 'checkbox', name: 'Agree', state: { checked: false } },
  ],
};

describe('the page evidence key (§ New evidence)', () => {
  it('is the same for the same page, whatever order the state keys came in', () => {
    const reordered = { ...page, elements: [page.elements[0]!, { role: 'checkbox', name: 'Agree', state: { checked: false } }] };
    expect(pageEvidenceKey(reordered)).toBe(pageEvidenceKey(page));
    expect(pageEvidenceKey(page)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with the URL, the title, the text, and any element role, name or state', () => {
    const key = pageEvidenceKey(page);
    const variants: PageObservation[] = [
      { ...page, url: 'https://example.com/b' },
      { ...page, title: 'B' },
      { ...page, text: 'Hello!' },
      { ...page, elements: [page.elements[0]!, { role: 'checkbox', name: 'Agree', state: { checked: true } }] },
      { ...page, elements: [page.elements[0]!, { role: 'switch', name: 'Agree', state: { checked: false } }] },
      { ...page, elements: [page.elements[0]!, { role: 'checkbox', name: 'Disagree', state: { checked: false } }] },
      { ...page, elements: [page.elements[0]!] },
    ];
    for (const variant of variants) expect(pageEvidenceKey(variant)).not.toBe(key);
  });

  it('leaves element references and boxes out: a new snapshot of the same page keys the same', () => {
    const first = flattenAriaTree([{ role: 'button', name: 'Go', ref: 'e2', box: { x: 1 } }, 'text']);
    const second = flattenAriaTree([{ role: 'button', name: 'Go', ref: 'e9', box: { x: 5 } }, 'text']);
    expect(first).toEqual(second);
    expect(first).toEqual([
      { role: 'button', name: 'Go', state: {} },
      { role: 'text', name: 'text', state: {} },
    ]);
  });

  it('flattens nested children in document order and keeps scalar state only', () => {
    const elements = flattenAriaTree([
      {
        role: 'list',
        children: [
          { role: 'listitem', text: 'a' },
          { role: 'listitem', text: 'b' },
        ],
      },
      {
        role: 'combobox',
        name: 's',
        expanded: false,
        weird: { nested: true },
        children: [{ role: 'option', name: 'two', selected: true }],
      },
    ]);
    expect(elements.map((e) => `${e.role}:${e.name}`)).toEqual(['list:', 'listitem:', 'listitem:', 'combobox:s', 'option:two']);
    expect(elements[3]!.state).toEqual({ expanded: false });
    expect(elements[1]!.state).toEqual({ text: 'a' });
  });

  it('bounds the work a huge tree can cause', () => {
    const huge = Array.from({ length: 50_000 }, (_, i) => ({ role: 'listitem', name: String(i) }));
    expect(flattenAriaTree(huge)).toHaveLength(5_000);
  });
});

describe('URLs refused before navigation', () => {
  it.each([
    'file:///etc/passwd',
    'chrome://settings',
    'chrome-extension://x/y',
    'javascript:alert(1)',
    'data:text/html,<b>x</b>',
    'about:config',
    'view-source:https://example.com',
    'blob:https://example.com/1',
    'https://user:pass@example.com/',
    'not a url',
    `https://example.com/${'a'.repeat(3000)}`,
  ])('%s', (url) => {
    expect(refuseBeforeNavigation(url)).not.toBeNull();
  });

  it('admits http and https', () => {
    expect(refuseBeforeNavigation('https://example.com/x?y=1')).toBeNull();
    expect(refuseBeforeNavigation('http://example.com/')).toBeNull();
  });
});
