// The audit page: ask (streamed), follow a citation to the document tree with the cited spans
// highlighted, the versions behind the answer, and the list of past answers. Plain JS, no build.
"use strict";

const $ = (id) => document.getElementById(id);
const traces = new Map(); // answer id -> its trace (the audit view's data)

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

async function getJSON(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function fillSelect(select, values, keepFirst) {
  const first = keepFirst ? select.options[0] : null;
  select.replaceChildren(...(first ? [first] : []), ...values.map((v) => el("option", { value: v }, v)));
}

function status(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return status("type a question first", true);
  $("answer").hidden = false;
  $("answer-text").textContent = "";
  $("answer-form").textContent = "";
  $("citations").replaceChildren();
  $("also-given").replaceChildren();
  $("also-title").hidden = true;
  $("answer-meta").textContent = "";
  $("ask-button").disabled = true;
  status("asking…");
  try {
    const response = await fetch("/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        question,
        collection: $("collection").value || null,
        strategy: $("strategy").value,
        form: $("form").value || null,
      }),
    });
    if (!response.ok) throw new Error((await response.json()).detail || response.statusText);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        handleEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (err) {
    status(err.message, true);
  } finally {
    $("ask-button").disabled = false;
  }
}

function handleEvent(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trim());
  }
  const payload = JSON.parse(data.join("\n"));
  if (event === "token") $("answer-text").textContent += payload.text;
  else if (event === "note") status(payload.text);
  else if (event === "error") status(payload.detail, true);
  else if (event === "answer") showAnswer(payload);
}

function citationItem(row, cite) {
  return el(
    "li",
    { value: cite.n },
    el("a", { class: "citation", "data-n": cite.n, onclick: () => openAudit(row.answer_id, cite.n - 1) }, `[${cite.n}]`),
    ` ${cite.heading_path.join(" > ")} (${cite.doc_id}, node ${cite.node_id})`,
  );
}

function showAnswer(result) {
  const row = result.answer;
  $("answer-text").textContent = row.answer || "(no answer)";
  $("answer-form").textContent = result.form_note || "";
  // the nodes the answer rests on are its citations; the rest is the evidence also given
  const supports = result.citations.filter((cite) => cite.supports !== false);
  const also = result.citations.filter((cite) => cite.supports === false);
  $("citations").replaceChildren(...supports.map((cite) => citationItem(row, cite)));
  $("also-given").replaceChildren(...also.map((cite) => citationItem(row, cite)));
  $("also-title").hidden = !also.length;
  $("answer-meta").textContent = `${row.strategy}, ${row.seconds.toFixed(1)} s; answer id ${row.answer_id}`;
  $("answer-meta").dataset.answerId = row.answer_id;
  status(result.citations.length ? "answered: open a citation to audit it" : "answered without citations");
  loadHistory();
}

async function openAudit(answerId, sourceIndex = 0) {
  let trace = traces.get(answerId);
  if (!trace) {
    trace = await getJSON(`/trace/${encodeURIComponent(answerId)}`);
    traces.set(answerId, trace);
  }
  const row = trace.answer;
  $("audit").hidden = false;
  $("audit-id").textContent = answerId;
  $("audit-question").textContent = `${row.question} → ${row.answer}`;
  const v = trace.versions || {};
  const index = v.index || {};
  const hashes = v.doc_hashes || {};
  const changed = new Set([...trace.changed_docs, ...trace.changed_on_disk]);
  const rows = [
    ["strategy", `${row.strategy} (${row.source}, ${row.created_at.slice(0, 19).replace("T", " ")} UTC)`],
    ["index", `${index.table ?? "-"} v${index.version ?? "-"}, tag ${index.tag ?? "-"}`],
    ["router", v.router_model ?? "none"],
    ["reader", v.reader_model ?? "-"],
    ["embedder", v.embedder ?? "-"],
    // a cited source's state in words (unchanged, changed and re-indexed, changed on disk, ...)
    ...Object.entries(hashes).map(([doc, hash]) => {
      const state = trace.sources.find((s) => s.doc_id === doc)?.state;
      return [`source ${doc}`, `${hash.slice(0, 12)} ${state ? (state === "unchanged" ? state : state.toUpperCase()) : changed.has(doc) ? "CHANGED since" : "unchanged"}`];
    }),
  ];
  const focus = trace.sources[Math.min(sourceIndex, trace.sources.length - 1)];
  if (focus && focus.current_text !== focus.recorded_text) {
    rows.push(["text as cited", focus.recorded_text], ["text now", focus.current_text ?? "(no node of the document reads like it now)"]);
  }
  $("versions").tBodies[0].replaceChildren(
    ...rows.map(([k, value]) => el("tr", {}, el("td", {}, k), el("td", { class: /CHANGED|DELETED/.test(value) ? "changed" : "" }, value))),
  );
  $("audit-changed").textContent = changed.size ? `source changed since this answer: ${[...changed].join(", ")}` : "every cited source is unchanged";
  $("audit-changed").className = changed.size ? "changed" : "unchanged";
  if (!trace.sources.length) {
    $("doc-title").textContent = "no cited nodes (the reader saw no evidence)";
    $("doc-tree").replaceChildren();
    return;
  }
  // sources are stored with the ones the answer rests on first: index 0 is the one it rests on
  const open = Math.min(sourceIndex, trace.sources.length - 1);
  const source = trace.sources[open];
  markOpen(answerId, trace, open);
  $("heading-path").textContent = source.heading_path;
  const doc = await getJSON(`/documents/${encodeURIComponent(row.collection)}/${source.doc_id.split("/").map(encodeURIComponent).join("/")}`);
  $("doc-title").textContent = `${doc.title || doc.doc_id} (${doc.doc_id})`;
  renderTree(doc, trace.sources.filter((s) => s.doc_id === source.doc_id), source);
}

// the open citation marked: in the audit's list of citations and in the answer's own list
function markOpen(answerId, trace, open) {
  const supporting = trace.answer.supporting ?? -1;
  $("audit-citations").replaceChildren(
    ...trace.sources.map((s, i) =>
      el(
        "li",
        { class: i === open ? "open" : "", "data-source": i },
        el("a", { onclick: () => openAudit(answerId, i) }, `[${i + 1}]`),
        ` ${s.heading_path}${supporting >= 0 && i >= supporting ? " (evidence also given)" : ""}`,
      ),
    ),
  );
  const shown = $("answer-meta").dataset.answerId === answerId;
  for (const link of document.querySelectorAll("#answer a.citation")) {
    link.classList.toggle("open", shown && Number(link.dataset.n) === open + 1);
  }
}

// Markdown and reST inside node text, shown as a person reads it: `code` and ``code``, **bold**,
// *emphasis*, [links](url) as their text; anything else stays as written
const INLINE_MARKDOWN = /(`{1,2})([^`]+)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\[([^\]]+)\]\([^)\s]*\)/g;

function markdownText(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE_MARKDOWN)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[2] !== undefined) out.push(el("code", {}, m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(el("strong", {}, m[3] ?? m[4]));
    else if (m[5] !== undefined) out.push(el("em", {}, m[5]));
    else out.push(m[6]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function renderTree(doc, cited, focus) {
  // a source re-indexed since is highlighted where its text is now (the recorded span points elsewhere)
  const spans = new Map(
    cited.filter((s) => s.current_span).map((s) => [s.current_node_id, s.current_span]),
  );
  const nodes = doc.nodes.map((node) => {
    const span = spans.get(node.node_id);
    const attrs = { class: `node ${node.kind}${span ? " cited" : ""}`, "data-node": node.node_id, style: `margin-left:${node.depth * 1.1}rem` };
    if (!span) return el("div", attrs, ...markdownText(node.text));
    // the document's own text around the cited span, the span itself marked
    const [start, end] = span;
    const [from, to] = [Math.min(node.span[0], start), Math.max(node.span[1], end)];
    return el(
      "div",
      attrs,
      ...markdownText(doc.text.slice(from, start)),
      el("mark", { class: "cited-span", "data-span": `${start}-${end}` }, ...markdownText(doc.text.slice(start, end))),
      ...markdownText(doc.text.slice(end, to)),
      el("span", { class: "span-label" }, `chars ${start}-${end}`),
    );
  });
  $("doc-tree").replaceChildren(...nodes);
  // scroll the tree alone (not the page): the versions above stay in view
  const tree = $("doc-tree");
  const target = tree.querySelector(`[data-node="${focus.current_node_id ?? focus.node_id}"]`);
  if (target) tree.scrollTop = Math.max(0, target.offsetTop - tree.clientHeight / 2);
}

async function loadHistory(event) {
  if (event) event.preventDefault();
  const params = new URLSearchParams();
  for (const name of ["collection", "source", "strategy", "contains"]) {
    const value = $(`f-${name}`).value.trim();
    if (value) params.set(name, value);
  }
  params.set("limit", "50");
  const listing = await getJSON(`/answers?${params}`);
  for (const name of ["collection", "source", "strategy"]) {
    const select = $(`f-${name}`);
    const chosen = select.value;
    fillSelect(select, listing.facets[name], true);
    select.value = chosen;
  }
  $("history").tBodies[0].replaceChildren(
    ...listing.answers.map((a) =>
      el(
        "tr",
        { "data-answer": a.answer_id },
        el("td", {}, a.created_at.replace("T", " ")),
        el("td", {}, a.source),
        el("td", {}, a.strategy),
        // opens the citation the answer rests on (stored first)
        el("td", {}, el("a", { onclick: () => openAudit(a.answer_id, 0) }, a.question)),
        el("td", {}, a.answer.slice(0, 80)),
      ),
    ),
  );
}

async function start() {
  $("ask-form").addEventListener("submit", ask);
  $("filters").addEventListener("submit", loadHistory);
  try {
    const [collections, strategies] = await Promise.all([getJSON("/collections"), getJSON("/strategies")]);
    fillSelect($("collection"), collections.collections.map((c) => c.collection));
    fillSelect($("strategy"), strategies.strategies);
    $("strategy").value = strategies.default;
    await loadHistory();
    status("ready");
  } catch (err) {
    status(err.message, true);
  }
}

start();
