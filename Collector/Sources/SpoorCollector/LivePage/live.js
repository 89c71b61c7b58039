// The live events page of spoor-collector. It polls GET /v1/events/recent for the events stored after the last
// one it saw and renders them; every value that came from a client goes into the page as text, never as markup.
"use strict";

(() => {
  const MAX_ROWS = 500; // the page never holds more events than this, however long it stays open
  const POLL_MS = 1000;
  const RETRY_MAX_MS = 8000;
  const TOKEN_KEY = "spoor.collector.token";
  const PREVIEW_PAIRS = 6;

  const $ = (id) => document.getElementById(id);
  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const numbers = new Intl.NumberFormat("en-US");

  const state = {
    feed: null, // the feed id of the collector run the rows came from
    after: 0, // the position of the newest event read
    entries: [], // newest first, at most MAX_ROWS: { event (as the API sent it), auto, search, distinct }
    paused: false,
    pending: 0, // events that arrived while paused
    skipped: 0, // events the feed no longer had when the page asked (it fell behind)
    selected: null, // the entry in the drawer
    filter: { name: "", distinct: "", text: "" },
    nameOptions: "",
    autoNames: new Set(), // names of auto-tracked events, among those listed by name
    retryMs: POLL_MS,
    timer: 0,
  };
  const entryOfRow = new WeakMap();

  // Polling

  function schedule(ms) {
    clearTimeout(state.timer);
    state.timer = setTimeout(poll, ms);
  }

  function backoff() {
    state.retryMs = Math.min(state.retryMs * 2, RETRY_MAX_MS);
    return state.retryMs;
  }

  async function poll() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    let response;
    let body = null;
    try {
      response = await fetch(`/v1/events/recent?after=${state.after}&limit=${MAX_ROWS}`, { headers, cache: "no-store" });
      body = await response.json().catch(() => null);
    } catch (error) {
      setState("offline", "Collector unreachable, retrying");
      return schedule(backoff());
    }
    if (response.status === 401) return askForToken(token ? "The collector did not accept that token." : "");
    if (!response.ok || body === null) {
      setState("error", body && body.detail ? `Error: ${body.detail}` : `Error: HTTP ${response.status}`);
      return schedule(backoff());
    }
    state.retryMs = POLL_MS;
    if (state.feed !== null && body.feed !== state.feed) {
      // The collector restarted: its positions began again, so the rows start over.
      reset();
      return schedule(0);
    }
    receive(body);
    $("sign-out").hidden = !token;
    setState(state.paused ? "paused" : "live", state.paused ? "Paused" : "Live");
    schedule(POLL_MS);
  }

  function receive(body) {
    const first = state.feed === null;
    state.feed = body.feed;
    if (!first) state.skipped += body.skipped;
    state.after = Math.max(state.after, body.latest);
    const fresh = body.events.map(prepare); // oldest first
    if (fresh.length > 0) {
      state.entries = fresh.slice().reverse().concat(state.entries).slice(0, MAX_ROWS);
      if (state.paused) {
        state.pending += fresh.length;
      } else {
        prependRows(fresh, !first);
      }
    }
    renderStats(body.stats);
    renderNameOptions();
    renderNotice();
    renderShown();
  }

  function prepare(event) {
    const lib = event.lib || {};
    const auto = lib.$lib_method === "autoTrack";
    if (auto) state.autoNames.add(event.name);
    return {
      event,
      auto,
      search: JSON.stringify(event.properties).toLowerCase(),
      distinct: String(event.distinct_id).toLowerCase(),
    };
  }

  function reset() {
    state.feed = null;
    state.after = 0;
    state.entries = [];
    state.pending = 0;
    state.skipped = 0;
    $("rows").replaceChildren();
    renderNotice();
    renderShown();
  }

  // Rows

  function prependRows(fresh, highlight) {
    const rows = $("rows");
    for (const entry of fresh) {
      const row = rowFor(entry);
      if (highlight) row.classList.add("fresh");
      rows.insertBefore(row, rows.firstChild);
    }
    while (rows.childElementCount > MAX_ROWS) rows.lastElementChild.remove();
  }

  function renderAllRows() {
    $("rows").replaceChildren(...state.entries.map(rowFor));
  }

  function rowFor(entry) {
    const event = entry.event;
    const row = element("tr");
    row.tabIndex = 0;
    row.dataset.position = event.position;
    row.dataset.name = event.name;
    const time = element("td", "time", formatTime(event.time_ms));
    time.title = `Event time ${isoTime(event.time_ms)}\nReceived ${isoTime(event.received_at)}`;
    const name = element("td", "name", event.name);
    name.title = event.name;
    if (entry.auto) name.append(element("span", "badge", "auto"));
    const distinct = element("td", "distinct", event.distinct_id);
    distinct.title = event.distinct_id;
    row.append(time, name, distinct, preview(event));
    row.hidden = !matches(entry);
    if (state.selected && state.selected.event.position === event.position) row.classList.add("selected");
    entryOfRow.set(row, entry);
    return row;
  }

  // The first few properties, the app's own before the preset `$` ones.
  function preview(event) {
    const cell = element("td", "props");
    if (event.omitted_bytes) {
      cell.textContent = `${numbers.format(Math.round(event.omitted_bytes / 1024))} KB event, too large to keep here`;
      return cell;
    }
    const keys = Object.keys(event.properties || {});
    keys.sort((a, b) => (a.startsWith("$") - b.startsWith("$")) || (a < b ? -1 : a > b ? 1 : 0));
    keys.slice(0, PREVIEW_PAIRS).forEach((key, index) => {
      if (index > 0) cell.append(element("span", "sep", "·"));
      cell.append(element("span", "key", key + " "), element("span", "value", shortValue(event.properties[key])));
    });
    if (keys.length === 0) cell.append(element("span", "key", "no properties"));
    cell.title = JSON.stringify(event.properties);
    return cell;
  }

  function shortValue(value) {
    const text = typeof value === "string" && value !== "" ? value : JSON.stringify(value);
    return text.length > 40 ? text.slice(0, 39) + "…" : text;
  }

  // Filters

  function matches(entry) {
    const filter = state.filter;
    return (filter.name === "" || entry.event.name === filter.name)
      && (filter.distinct === "" || entry.distinct.includes(filter.distinct))
      && (filter.text === "" || entry.search.includes(filter.text));
  }

  function applyFilters() {
    state.filter = {
      name: $("filter-name").value,
      distinct: $("filter-distinct").value.trim().toLowerCase(),
      text: $("filter-text").value.trim().toLowerCase(),
    };
    for (const row of $("rows").children) row.hidden = !matches(entryOfRow.get(row));
    for (const item of $("names").children) item.classList.toggle("active", item.dataset.name === state.filter.name);
    renderShown();
  }

  function renderShown() {
    const rows = $("rows").children;
    let visible = 0;
    for (const row of rows) if (!row.hidden) visible += 1;
    const total = rows.length;
    const noun = total === 1 ? "event" : "events";
    $("shown").textContent = visible === total ? `${numbers.format(total)} ${noun}` : `${numbers.format(visible)} of ${numbers.format(total)} ${noun}`;
    $("empty").hidden = visible > 0;
    const [title, text] = $("empty").children;
    if (total === 0) {
      title.textContent = "Waiting for events";
      text.hidden = false;
    } else {
      title.textContent = "No events match these filters";
      text.hidden = true;
    }
  }

  function renderNameOptions() {
    const names = new Set(state.entries.map((entry) => entry.event.name));
    for (const item of $("names").children) names.add(item.dataset.name);
    if (state.filter.name) names.add(state.filter.name);
    const sorted = [...names].sort();
    const key = sorted.join("\u0000");
    if (key === state.nameOptions) return;
    state.nameOptions = key;
    const select = $("filter-name");
    const chosen = select.value;
    const all = element("option", "", "All events");
    all.value = "";
    select.replaceChildren(all, ...sorted.map((name) => {
      const option = element("option", "", name);
      option.value = name;
      return option;
    }));
    select.value = chosen;
  }

  // Numbers: the chart, the counters and the counts by name

  function renderStats(stats) {
    setCounter("count-stored", stats.events_stored, "");
    setCounter("count-duplicates", stats.duplicate_batches, "");
    setCounter("count-refused", stats.refused_batches, stats.refused_batches > 0 ? "bad" : "");
    renderChart(stats.rate.counts);
    renderNames(stats);
  }

  function setCounter(id, value, tone) {
    const node = $(id);
    node.textContent = numbers.format(value);
    node.parentElement.className = "counter" + (tone ? " " + tone : "");
  }

  function renderChart(counts) {
    const peak = counts.reduce((a, b) => Math.max(a, b), 0);
    const scale = niceCeiling(Math.max(peak, 1));
    let path = "";
    counts.forEach((count, index) => {
      if (count <= 0) return;
      const height = Math.max((count / scale) * 99, 1.5);
      path += `M${index} ${(99.5 - height).toFixed(2)}h1V99.5h-1Z`;
    });
    $("chart-bars").setAttribute("d", path);
    $("chart-peak").textContent = `${numbers.format(scale)}/s`;
    const recent = counts.slice(-10).reduce((a, b) => a + b, 0) / 10;
    $("rate-now").textContent = recent >= 10 ? numbers.format(Math.round(recent)) : recent.toFixed(1);
  }

  function niceCeiling(value) {
    const magnitude = 10 ** Math.floor(Math.log10(value));
    for (const step of [1, 2, 5, 10]) if (value <= step * magnitude) return step * magnitude;
    return 10 * magnitude;
  }

  function renderNames(stats) {
    // Kept to the names listed, so that a client sending ever new names cannot grow it.
    const listed = new Set(stats.names.map(({ name }) => name));
    state.autoNames = new Set([...state.autoNames].filter((name) => listed.has(name)));
    const list = $("names");
    const top = stats.names[0] ? stats.names[0].count : 1;
    // The same names in the same order are updated in place, so a click is never lost to a rebuilt list.
    const same = list.children.length === stats.names.length
      && stats.names.every(({ name }, index) => list.children[index].dataset.name === name);
    if (!same) {
      list.replaceChildren(...stats.names.map(({ name }) => {
        const item = element("li");
        item.dataset.name = name;
        item.title = `Show only ${name}`;
        const row = element("div", "row");
        row.append(element("span", "label", name), element("span", "count"));
        item.append(row, element("div", "bar"));
        return item;
      }));
    }
    stats.names.forEach(({ name, count }, index) => {
      const item = list.children[index];
      item.classList.toggle("active", name === state.filter.name);
      item.querySelector(".count").textContent = numbers.format(count);
      const bar = item.querySelector(".bar");
      bar.classList.toggle("auto", state.autoNames.has(name));
      bar.style.width = `${Math.max((count / top) * 100, 1)}%`;
    });
    const more = [];
    const hiddenNames = stats.distinct_names - stats.names.length;
    if (hiddenNames > 0) more.push(`${numbers.format(hiddenNames)} more ${hiddenNames === 1 ? "name" : "names"}`);
    if (stats.unlisted_events > 0) more.push(`${numbers.format(stats.unlisted_events)} events under names past the first 1,000`);
    $("names-more").textContent = more.join("; ");
    $("names-more").hidden = more.length === 0;
  }

  function renderNotice() {
    const parts = [];
    if (state.paused) {
      parts.push(state.pending > 0
        ? `Paused: ${numbers.format(state.pending)} new ${state.pending === 1 ? "event is" : "events are"} waiting. Resume to show them.`
        : "Paused: new events wait until you resume.");
    }
    if (state.skipped > 0) {
      parts.push(`${numbers.format(state.skipped)} events came faster than this page reads and are not listed; the chart and the counts include them.`);
    }
    $("notice").textContent = parts.join(" ");
    $("notice").hidden = parts.length === 0;
  }

  // The event drawer

  function openDetail(entry) {
    state.selected = entry;
    for (const row of $("rows").children) row.classList.toggle("selected", entryOfRow.get(row) === entry);
    const event = entry.event;
    const title = $("detail-title");
    title.textContent = event.name;
    if (entry.auto) title.append(element("span", "badge", "auto-tracked"));
    $("detail-time").textContent = `${formatTime(event.time_ms)} · received ${formatTime(event.received_at)}`;
    const note = $("detail-note");
    note.hidden = !event.omitted_bytes;
    note.textContent = event.omitted_bytes
      ? `This event is ${numbers.format(Math.round(event.omitted_bytes / 1024))} KB: the live feed keeps events up to 64 KB whole, so its lib and properties are left out here. The store has all of it.`
      : "";
    $("detail-json").replaceChildren(...highlightJSON(JSON.stringify(event, null, 2)));
    $("detail").hidden = false;
  }

  function closeDetail() {
    state.selected = null;
    $("detail").hidden = true;
    for (const row of $("rows").querySelectorAll("tr.selected")) row.classList.remove("selected");
  }

  function highlightJSON(text) {
    const nodes = [];
    const token = /("(?:\\.|[^"\\])*")(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
    let last = 0;
    for (let match; (match = token.exec(text)) !== null;) {
      if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
      const kind = match[1] ? (match[2] ? "k" : "s") : /^[tfn]/.test(match[0]) ? "l" : "n";
      nodes.push(element("span", kind, match[1] && match[2] ? match[1] : match[0]));
      if (match[1] && match[2]) nodes.push(document.createTextNode(match[2]));
      last = token.lastIndex;
    }
    nodes.push(document.createTextNode(text.slice(last)));
    return nodes;
  }

  async function copyDetail() {
    const text = $("detail-json").textContent;
    const button = $("detail-copy");
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch (error) {
      // No clipboard (a plain-HTTP origin other than localhost): select the text for the user to copy.
      getSelection().selectAllChildren($("detail-json"));
      button.textContent = "Selected";
    }
    setTimeout(() => { button.textContent = "Copy JSON"; }, 1500);
  }

  // Pause, sign-in, status

  function togglePause() {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    if (!state.paused) {
      state.pending = 0;
      renderAllRows();
      renderShown();
    }
    renderNotice();
    if (document.body.dataset.state === "live" || document.body.dataset.state === "paused") {
      setState(state.paused ? "paused" : "live", state.paused ? "Paused" : "Live");
    }
  }

  function askForToken(message) {
    clearTimeout(state.timer);
    if (message) sessionStorage.removeItem(TOKEN_KEY);
    setState("login", "Token needed");
    $("login").hidden = false;
    $("login-error").textContent = message;
    $("login-error").hidden = !message;
    $("token").value = "";
    $("token").focus();
  }

  function signIn(submit) {
    submit.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("login").hidden = true;
    setState("loading", "Connecting…");
    schedule(0);
  }

  function signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    closeDetail();
    reset();
    $("sign-out").hidden = true;
    askForToken("");
  }

  function setState(name, text) {
    document.body.dataset.state = name;
    $("status-text").textContent = text;
    $("pause").disabled = name !== "live" && name !== "paused";
  }

  // Times: the browser's time zone, the date only when it is not today; a time no Date can hold is shown as sent.

  const pad = (number, width = 2) => String(number).padStart(width, "0");

  function formatTime(ms) {
    const date = new Date(ms);
    if (!Number.isFinite(date.getTime())) return String(ms);
    const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
    const now = new Date();
    const today = date.getFullYear() === now.getFullYear() && date.getMonth() === now.getMonth() && date.getDate() === now.getDate();
    return today ? clock : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${clock}`;
  }

  function isoTime(ms) {
    const date = new Date(ms);
    return Number.isFinite(date.getTime()) ? date.toISOString() : String(ms);
  }

  // Wiring

  $("origin").textContent = location.host;
  $("pause").addEventListener("click", togglePause);
  $("sign-out").addEventListener("click", signOut);
  $("login-form").addEventListener("submit", signIn);
  $("filters").addEventListener("submit", (submit) => submit.preventDefault());
  $("filters").addEventListener("input", applyFilters);
  $("names").addEventListener("click", (click) => {
    const item = click.target.closest("li");
    if (!item) return;
    $("filter-name").value = state.filter.name === item.dataset.name ? "" : item.dataset.name;
    applyFilters();
  });
  $("rows").addEventListener("click", (click) => {
    const row = click.target.closest("tr");
    if (row) openDetail(entryOfRow.get(row));
  });
  // A row flashes once when it arrives. The class goes when the flash ends, or is cut short by a filter hiding
  // the row, so that showing the row again does not flash it.
  for (const type of ["animationend", "animationcancel"]) {
    $("rows").addEventListener(type, (animation) => animation.target.classList.remove("fresh"));
  }
  $("rows").addEventListener("keydown", (key) => {
    const row = key.target.closest("tr");
    if (row && key.key === "Enter") openDetail(entryOfRow.get(row));
  });
  $("detail-close").addEventListener("click", closeDetail);
  $("detail-copy").addEventListener("click", copyDetail);
  document.addEventListener("keydown", (key) => {
    if (key.key === "Escape" && !$("detail").hidden) closeDetail();
  });
  renderShown();
  poll();
})();
