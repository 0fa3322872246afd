// Injected into the page before Taskdeck's own scripts (context.addInitScript) by bench.mjs.
// It only observes: a MutationObserver notes when rows appear or change, and a MessageChannel
// message posted from the observer callback marks "after the frame that carries the change was
// rendered" (the message task runs once the rendering step that followed the mutation is done).
// Times are performance.now() (ms since navigation start) or epoch ms (origin + now), which
// compares with the server's event timestamps (same machine clock).
(() => {
  /** Logged (console.debug) once the first row is rendered; bench.mjs waits for it. */
  const FIRST_ROW_MESSAGE = 'taskdeck-bench: first row rendered';
  const B = {
    firstRow: null, // performance.now() when the first task row was in the DOM
    firstRowPainted: null, // ... and after the frame that rendered it
    firstRowId: null,
    watch: null, // {ids, since, done, t, painted} while waiting for a filter to apply
    recording: false,
    records: [], // {id, msg, badge, t, painted} (epoch ms) per visible-row change while recording
    last: new Map(),
    longTasks: [],
    inputs: [], // {type, t} of user input events (event.timeStamp)
  };
  window.__bench = B;
  const epoch = () => performance.timeOrigin + performance.now();
  const afterPaint = (fn) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => fn();
    ch.port2.postMessage(0);
  };

  // The list's scroll position and height, cached from scroll events and a ResizeObserver:
  // reading them in the MutationObserver callback would force a layout in the middle of the
  // page's own frame and distort what is measured.
  const geom = { top: 0, height: 0, list: null };
  function watchGeometry() {
    const list = document.getElementById('task-list');
    if (!list || geom.list === list) return list;
    geom.list = list;
    geom.top = list.scrollTop;
    geom.height = list.clientHeight;
    list.addEventListener('scroll', () => (geom.top = list.scrollTop), { passive: true });
    new ResizeObserver(() => (geom.height = list.clientHeight)).observe(list);
    return list;
  }
  B.refreshGeometry = () => {
    const list = watchGeometry();
    if (!list) return;
    geom.top = list.scrollTop;
    geom.height = list.clientHeight;
  };

  /** Rows inside the list's viewport, top to bottom: [{id, msg, badge}]. */
  function visibleRows() {
    const list = watchGeometry();
    if (!list) return [];
    const top = geom.top;
    const bottom = top + geom.height;
    const out = [];
    for (const el of list.querySelectorAll('.row')) {
      if (el.hidden) continue;
      const m = /translateY\(([-\d.]+)px\)/.exec(el.style.transform);
      const y = m ? Number(m[1]) : 0;
      if (y + 64 <= top || y >= bottom) continue;
      const idEl = el.querySelector('.row-id');
      const id = idEl && idEl.title;
      if (!id) continue;
      const badge = el.querySelector('.badge');
      out.push({ y, id, msg: el.querySelector('.row-msg').textContent, badge: badge ? badge.className : '' });
    }
    out.sort((a, b) => a.y - b.y);
    return out;
  }
  B.visibleRows = visibleRows;

  /** Resolves `watch` when the rows in view are exactly the first ones of `ids`. */
  B.watchFor = (ids, inputType) => {
    B.refreshGeometry();
    B.inputs = [];
    B.watch = { ids, inputType, done: false, t: null, painted: null };
  };

  function check(now) {
    const w = B.watch;
    if (!w || w.done) return;
    // Only once the user acted (the list may briefly show the target rows before, never after).
    if (!B.inputs.some((e) => e.type === w.inputType)) return;
    const rows = visibleRows();
    if (!rows.length) return;
    const want = w.ids.slice(0, rows.length);
    // All rows in view are the expected ones, in order, and the view is full (or the list ends).
    if (rows.length < Math.min(w.ids.length, 3)) return;
    for (let i = 0; i < want.length; i++) if (rows[i].id !== want[i]) return;
    w.done = true;
    w.t = now;
    afterPaint(() => (w.painted = performance.now()));
  }

  function record() {
    const t = epoch();
    const batch = [];
    for (const r of visibleRows()) {
      const sig = `${r.badge}|${r.msg}`;
      if (B.last.get(r.id) === sig) continue;
      B.last.set(r.id, sig);
      const rec = { id: r.id, msg: r.msg, badge: r.badge, t, painted: null };
      B.records.push(rec);
      batch.push(rec);
    }
    if (batch.length)
      afterPaint(() => {
        const p = epoch();
        for (const rec of batch) rec.painted = p;
      });
  }
  B.startRecording = () => {
    B.refreshGeometry();
    B.records = [];
    B.last = new Map();
    for (const r of visibleRows()) B.last.set(r.id, `${r.badge}|${r.msg}`);
    B.arrivals = [];
    B.recording = true;
  };
  B.stopRecording = () => {
    B.recording = false;
    const arrivals = B.arrivals;
    B.arrivals = null;
    return { records: B.records, arrivals };
  };

  const mo = new MutationObserver(() => {
    const now = performance.now();
    if (B.firstRow === null) {
      // The top row (no geometry read: the page is still booting).
      const idEl = document.querySelector('#task-list .row[aria-rowindex="1"]:not([hidden]) .row-id[title]');
      if (idEl) {
        B.firstRow = now;
        B.firstRowId = idEl.title;
        afterPaint(() => {
          B.firstRowPainted = performance.now();
          // Tells the harness without it evaluating anything in the page while it loads.
          console.debug(FIRST_ROW_MESSAGE);
        });
      }
    }
    if (B.watch) check(now);
    if (B.recording) record();
  });
  mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['hidden', 'class', 'style', 'title'] });

  // When each request started and when its response headers arrived (the event stream's
  // "open"), for the first-paint breakdown.
  B.fetches = [];
  const realFetch = window.fetch;
  window.fetch = function (input, init) {
    const rec = { url: String(input && input.url ? input.url : input), start: performance.now(), headers: null };
    B.fetches.push(rec);
    const p = realFetch.call(this, input, init);
    p.then((resp) => {
      rec.headers = performance.now();
      if (/\/v1\/events/.test(rec.url) && resp.body) tapEvents(resp.body);
    }, () => {});
    return p;
  };

  // When each event of the live stream reached the page (the chunk read that carried its
  // `id:` line), while recording: separates the transport from the page's own work.
  B.arrivals = null;
  function tapEvents(body) {
    const getReader = body.getReader.bind(body);
    body.getReader = (...args) => {
      const reader = getReader(...args);
      const read = reader.read.bind(reader);
      const decoder = new TextDecoder();
      reader.read = () =>
        read().then((res) => {
          if (res.value && B.arrivals) {
            const t = epoch();
            for (const m of decoder.decode(res.value, { stream: true }).matchAll(/^id: ?(\d+)$/gm)) B.arrivals.push([Number(m[1]), t]);
          }
          return res;
        });
      return reader;
    };
  }

  for (const type of ['click', 'input', 'keydown']) {
    document.addEventListener(type, (e) => B.inputs.push({ type, t: e.timeStamp, target: e.target && e.target.id }), true);
  }
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) B.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    // no long task timing
  }
})();
