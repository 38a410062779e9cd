"""JavaScript the Chromium backend evaluates in the page.

``EXTRACT_ELEMENTS`` lists the interactive elements with the same rules as
``html_extract.parse_page(scripting=True)`` (roles, accessible text, signature fields) and tags
each with ``data-skillrt-idx`` so an action can find it again, at most ``MAX_ELEMENTS`` of
them (a page of 300,000 links is not shipped here whole), as one JSON string: Playwright checks
a structured result value by value in this process, which for 3,000 elements held the event
loop for seconds, while a string costs it nothing. Password values never leave the page:
only whether the field is filled.
"""

from __future__ import annotations

from skillrt.skills.browsing.html_extract import MAX_ELEMENTS

__all__ = ["EXTRACT_ELEMENTS", "IS_REDIRECT_STUB", "SUBMIT_FORM", "TAG_ATTRIBUTE"]

TAG_ATTRIBUTE = "data-skillrt-idx"

EXTRACT_ELEMENTS = r"""
() => {
  const TAG = "data-skillrt-idx";
  const WIDGETS = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "combobox", "textbox", "searchbox",
    "listbox", "slider", "spinbutton", "treeitem"]);
  const TEXT_INPUTS = new Set(["text", "email", "password", "number", "tel", "url", "date",
    "datetime-local", "month", "week", "time", "color", "range"]);
  const squash = (s, n = 100) => {
    s = (s || "").replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
  };
  const attr = (el, name) => (el.getAttribute(name) || "").trim();
  const hidden = (el) => {
    if (el.closest('[hidden], [aria-hidden="true"], template, noscript')) return true;
    if (!el.getClientRects().length) return true;
    return getComputedStyle(el).visibility === "hidden";
  };
  const labelText = (label) => {
    const copy = label.cloneNode(true);
    copy.querySelectorAll("select, input, textarea, button").forEach((c) => c.remove());
    return squash(copy.textContent);
  };
  const name = (el) => {
    const aria = attr(el, "aria-label");
    if (aria) return squash(aria);
    const ids = attr(el, "aria-labelledby").split(/\s+/).filter(Boolean);
    if (ids.length) {
      const t = ids.map((i) => {
        const n = document.getElementById(i);
        return n ? n.textContent : "";
      }).join(" ");
      if (t.trim()) return squash(t);
    }
    const tag = el.tagName.toLowerCase();
    const kind = attr(el, "type").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") {
      if (tag === "input" && ["submit", "button", "reset"].includes(kind))
        return squash(attr(el, "value") || (kind === "reset" ? "Reset" : "Submit"));
      if (tag === "input" && kind === "image")
        return squash(attr(el, "alt") || attr(el, "value") || "Submit");
      const id = attr(el, "id");
      if (id) {
        const byFor = document.querySelector('label[for="' + CSS.escape(id) + '"]');
        if (byFor) return squash(byFor.textContent);
      }
      const wrap = el.closest("label");
      if (wrap) return labelText(wrap);
      return squash(attr(el, "title"));
    }
    let text = squash(el.textContent);
    if (!text) {
      const img = el.querySelector("img[alt]");
      text = img ? squash(attr(img, "alt")) : "";
    }
    return text || squash(attr(el, "title"));
  };
  const roleOf = (el) => {
    const tag = el.tagName.toLowerCase();
    const explicit = attr(el, "role").toLowerCase();
    let kind = attr(el, "type").toLowerCase();
    if (tag === "a") {
      if (!el.hasAttribute("href") && !explicit && !el.hasAttribute("onclick")) return null;
      return [WIDGETS.has(explicit) ? explicit : "link", ""];
    }
    if (tag === "button") return [WIDGETS.has(explicit) ? explicit : "button", kind || "submit"];
    if (tag === "input") {
      kind = kind || "text";
      if (kind === "hidden" || kind === "file") return null;
      if (["submit", "image", "button", "reset"].includes(kind)) return ["button", kind];
      if (kind === "checkbox" || kind === "radio") return [kind, kind];
      if (kind === "search") return ["searchbox", kind];
      return ["textbox", TEXT_INPUTS.has(kind) ? kind : "text"];
    }
    if (tag === "textarea") return ["textbox", "textarea"];
    if (tag === "select") return [el.multiple ? "listbox" : "combobox", "select"];
    if (WIDGETS.has(explicit) || el.hasAttribute("onclick")) return [explicit || "button", ""];
    if (tag === "summary") return ["button", ""];
    return null;
  };
  document.querySelectorAll("[" + TAG + "]").forEach((el) => el.removeAttribute(TAG));
  const out = [];
  const nodes = document.querySelectorAll(
    "a, button, input, textarea, select, summary, [role], [onclick]");
  for (const el of nodes) {
    if (out.length >= __MAX__) break;
    const found = roleOf(el);
    if (!found || hidden(el)) continue;
    const [role, kind] = found;
    const index = out.length + 1;
    el.setAttribute(TAG, String(index));
    const tag = el.tagName.toLowerCase();
    let href = "";
    if (tag === "a" && el.hasAttribute("href")) {
      try {
        href = new URL(el.getAttribute("href"), document.baseURI).href;
      } catch (e) {
        href = "";
      }
    }
    const item = {
      index, role, type: kind, tag, text: name(el), href,
      id: attr(el, "id"), name: attr(el, "name"), aria_label: squash(attr(el, "aria-label")),
      placeholder: squash(attr(el, "placeholder")),
      value: null, filled: false, checked: null, options: [], selected: [],
      disabled: !!el.disabled || attr(el, "aria-disabled") === "true",
    };
    if (tag === "input" && !["submit", "image", "button", "reset"].includes(kind)) {
      if (kind === "checkbox" || kind === "radio") item.checked = el.checked;
      else if (kind === "password") item.filled = el.value.length > 0;
      else item.value = el.value || null;
    } else if (tag === "textarea") {
      item.value = el.value || null;
    } else if (tag === "select") {
      item.options = Array.from(el.options).map((o) => squash(o.textContent) || o.value);
      item.selected = Array.from(el.selectedOptions).map((o) => squash(o.textContent) || o.value);
    }
    out.push(item);
  }
  return JSON.stringify(out);
}
""".replace("__MAX__", str(MAX_ELEMENTS))

SUBMIT_FORM = r"""
(el) => {
  const form = el ? (el.form || el.closest("form")) : null;
  const target = form || (document.forms.length === 1 ? document.forms[0] : null);
  if (!target) return false;
  if (typeof target.requestSubmit === "function") target.requestSubmit(); else target.submit();
  return true;
}
"""

IS_REDIRECT_STUB = "() => !!document.querySelector('meta[name=\"skillrt-redirect\"]')"
