// Small DOM helpers shared by the job page (app.js) and the operator console (console.js).

/** Creates an element; attributes starting with "data-" become data attributes. Text stays text. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name in node && !name.startsWith('data-') && !name.startsWith('aria-')) node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function timeElement(iso) {
  return h('time', { datetime: iso || '', title: iso || '', text: time(iso) });
}
