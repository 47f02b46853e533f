// CodeMirror injects its base styles with style-mod, which uses a <style> element when mounted
// in a document — blocked by the app's strict CSP (style-src 'self'). Inside a shadow root it
// uses a constructable stylesheet (adoptedStyleSheets), which CSP allows. So editors live in a
// shadow root, and our own editor styles are adopted there the same way.
import shadowCss from './editor-shadow.css?inline';

let sheet: CSSStyleSheet | null = null;

/** The shadow root of `host` (created once) with the editor styles applied, and an inner mount element. */
export function shadowMount(host: HTMLElement, className: string): { root: ShadowRoot; mount: HTMLElement } {
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    if (!sheet) { sheet = new CSSStyleSheet(); sheet.replaceSync(shadowCss); }
    if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  } else if (!root.querySelector('style[data-editor-styles]')) {
    // environments without constructable stylesheets (jsdom in tests)
    const style = document.createElement('style');
    style.setAttribute('data-editor-styles', '');
    style.textContent = shadowCss;
    root.appendChild(style);
  }
  const mount = document.createElement('div');
  mount.className = className;
  root.appendChild(mount);
  return { root, mount };
}
