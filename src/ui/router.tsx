import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Addresses people share and bookmark: /runs, /runs/<run id>, /handlers, /schedules, /workflows. */

const listeners = new Set<() => void>();

// Keyboard focus after an in-app navigation: the old page's element that had it is gone, and
// focus would fall to <body>; the new page's heading takes it instead (components.tsx, Title).
let focusWanted = false;
let navigated = false;

/**
 * Whether a page's heading, just drawn, takes the focus: when a navigation asked for it (the same
 * page with another address too), or when the heading is new and focus had fallen to <body> after
 * a navigation (a page that draws its heading anew when its data arrives). A first visit leaves
 * focus where the browser puts it.
 */
export function headingTakesFocus(drawnAnew: boolean): boolean {
  const take = focusWanted || (drawnAnew && navigated && (document.activeElement === null || document.activeElement === document.body));
  focusWanted = false;
  return take;
}

function wantFocus(): void {
  focusWanted = true;
  navigated = true;
}

/** Changes the page; `replace` (a filter's change) keeps the history entry and the focus. */
export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else {
    history.pushState(null, '', href);
    wantFocus();
  }
  for (const listener of listeners) listener();
  if (!replace) window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  wantFocus();
  for (const listener of listeners) listener();
});

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const read = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const listener = () => setCurrent(read());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return current;
}

/** A link that changes the page without reloading it; a modified click opens a tab as any link does. */
export function Link(props: { href: string; class?: string; children: ComponentChildren; 'aria-current'?: 'page' | undefined; title?: string }): JSX.Element {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={onClick} aria-current={props['aria-current']} title={props.title}>
      {props.children}
    </a>
  );
}
