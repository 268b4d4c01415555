'use strict';
// The page: loads the Go client (WebAssembly), feeds it the person's
// controls, draws its view beside the server's truth and shows the
// timeline. window.arena holds what is drawn, for tests.
(() => {
  const session = Array.from(crypto.getRandomValues(new Uint8Array(8)), b => b.toString(16).padStart(2, '0')).join('');
  const arena = { session, view: null, truth: null, frames: 0, geometry: null, timelineUpdates: 0, linkPosts: 0, predict: true };
  window.arena = arena;
  const $ = id => document.getElementById(id);
  const canvas = $('views'), ctx = canvas.getContext('2d');
  const plot = $('errors'), pctx = plot.getContext('2d');
  const SIDE = 420, TOP = 20;
  let scale = 20, predict = true;

  // World (arena units, y up) to canvas pixels of the view at ox, and back.
  const px = (ox, x) => ox + SIDE / 2 + x * scale;
  const py = y => TOP + SIDE / 2 - y * scale;
  const world = (ox, cx, cy) => [(cx - ox - SIDE / 2) / scale, -(cy - TOP - SIDE / 2) / scale];

  // Controls.
  const keys = new Set();
  let aim = [0, 0];
  const axes = {
    x: [['KeyD', 'ArrowRight'], ['KeyA', 'ArrowLeft']],
    y: [['KeyW', 'ArrowUp'], ['KeyS', 'ArrowDown']],
  };
  const axis = a => (axes[a][0].some(k => keys.has(k)) ? 1 : 0) - (axes[a][1].some(k => keys.has(k)) ? 1 : 0);
  const sendControls = () => {
    if (window.ghostwire) window.ghostwire.controls(axis('x'), axis('y'), aim[0], aim[1]);
  };
  const movementKey = code => axes.x.flat().includes(code) || axes.y.flat().includes(code);
  window.addEventListener('keydown', e => {
    if (!movementKey(e.code) || e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return;
    e.preventDefault();
    keys.add(e.code);
    sendControls();
  });
  window.addEventListener('keyup', e => {
    if (!keys.delete(e.code)) return;
    e.preventDefault();
    sendControls();
  });
  window.addEventListener('blur', () => { keys.clear(); sendControls(); });
  canvas.addEventListener('mousemove', e => {
    const r = canvas.getBoundingClientRect();
    const cx = e.clientX - r.left, cy = e.clientY - r.top;
    aim = world(cx >= SIDE ? SIDE : 0, cx, cy);
    sendControls();
  });
  canvas.addEventListener('mousedown', e => {
    canvas.focus();
    if (e.button === 0 && window.ghostwire) window.ghostwire.fire();
  });

  // Link sliders and presets: posted to the server for this page's
  // connection.
  const sliders = { rtt: ' ms', jitter: ' ms', loss: ' %', dup: ' %' };
  let posting = null;
  const postLink = () => {
    clearTimeout(posting);
    posting = setTimeout(() => {
      const body = JSON.stringify({ RTTms: +$('rtt').value, JitterMS: +$('jitter').value, LossPct: +$('loss').value, DupPct: +$('dup').value });
      fetch('link?session=' + session, { method: 'POST', body }).then(() => arena.linkPosts++);
    }, 50);
  };
  for (const [id, unit] of Object.entries(sliders)) {
    const show = () => { $(id + '-v').textContent = $(id).value + unit; };
    $(id).addEventListener('input', () => { show(); postLink(); });
    show();
  }
  for (const b of document.querySelectorAll('.presets button')) {
    b.addEventListener('click', () => {
      for (const id of ['rtt', 'jitter', 'loss']) {
        $(id).value = b.dataset[id];
        $(id).dispatchEvent(new Event('input'));
      }
    });
  }
  $('predict').addEventListener('change', e => { predict = arena.predict = e.target.checked; });
  $('interp').addEventListener('change', e => window.ghostwire.start(session, +e.target.value));
  $('lagcomp').addEventListener('change', e => fetch('lagcomp', { method: 'POST', body: e.target.checked ? 'on' : 'off' }));

  // Drawing.
  const drawArena = (ox, title) => {
    ctx.fillStyle = '#222';
    ctx.font = '13px system-ui, sans-serif';
    ctx.fillText(title, ox + 8, 15);
    ctx.fillStyle = '#fafaf7';
    ctx.fillRect(px(ox, -arena.geometry.HalfSize), py(arena.geometry.HalfSize), 2 * arena.geometry.HalfSize * scale, 2 * arena.geometry.HalfSize * scale);
    ctx.strokeStyle = '#888';
    ctx.strokeRect(px(ox, -arena.geometry.HalfSize), py(arena.geometry.HalfSize), 2 * arena.geometry.HalfSize * scale, 2 * arena.geometry.HalfSize * scale);
    ctx.fillStyle = '#777';
    for (const [x0, y0, x1, y1] of arena.geometry.Walls) ctx.fillRect(px(ox, x0), py(y1), (x1 - x0) * scale, (y1 - y0) * scale);
  };
  const drawBody = (ox, b, colour, hollow) => {
    const r = arena.geometry.Radius * scale, x = px(ox, b.X), y = py(b.Y);
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    if (hollow) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1.5;
      ctx.stroke();
      ctx.lineWidth = 1;
      return;
    }
    ctx.fillStyle = b.HP > 0 ? colour : '#bbb';
    ctx.fill();
    ctx.strokeStyle = '#222';
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + Math.cos(b.Yaw) * r * 1.8, y - Math.sin(b.Yaw) * r * 1.8);
    ctx.stroke();
    ctx.fillStyle = '#2c3e50';
    ctx.fillRect(x - r, y - r - 6, 2 * r * Math.max(b.HP, 0) / 100, 3);
  };
  const draw = () => {
    requestAnimationFrame(draw);
    if (!window.ghostwire || !arena.geometry) return;
    const v = JSON.parse(window.ghostwire.view());
    arena.view = v;
    arena.frames++;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    drawArena(0, 'client: you predicted' + (predict ? '' : ' (off)') + ', others interpolated');
    drawArena(SIDE, 'server truth' + (arena.truth ? ' · tick ' + arena.truth.Tick : ''));
    for (const o of v.Others || []) drawBody(0, o, '#c0392b');
    if (v.HasOwn) {
      if (v.HasConfirmed) drawBody(0, v.Confirmed, '#333', true);
      if (predict) drawBody(0, v.Own, '#1a8f3a');
      else if (v.HasConfirmed) drawBody(0, v.Confirmed, '#1a8f3a');
    }
    if (arena.truth) {
      for (const p of arena.truth.Players) drawBody(SIDE, p, v.HasOwn && p.Ghost === v.Own.Ghost ? '#1a8f3a' : '#c0392b');
    }
    $('status').textContent = v.State + (v.Err ? ': ' + v.Err : '');
  };

  // Timeline, five times a second.
  const fmt = (x, d) => (x === undefined ? '–' : x.toFixed(d));
  const bytes = b => (b >= 1024 ? (b / 1024).toFixed(1) + ' KB/s' : b.toFixed(0) + ' B/s');
  const timeline = () => {
    const v = arena.view;
    if (!v) return;
    const t = v.Timeline;
    $('t-tick').textContent = t.Tick;
    $('t-confirmed').textContent = t.Confirmed;
    $('t-ahead').textContent = fmt(t.Ahead, 1);
    $('t-rollbacks').textContent = fmt(t.RollbacksPerS, 1);
    $('t-replayed').textContent = fmt(t.ReplayedPerS, 1);
    $('t-rtt').textContent = fmt(t.RTTms, 1) + ' ms ±' + fmt(t.JitterMS, 1);
    $('t-up').textContent = bytes(t.UpBps);
    $('t-down').textContent = bytes(t.DownBps);
    $('t-interp').textContent = fmt(t.InterpDelayMS, 0) + ' ms';
    $('t-mispredictions').textContent = t.Mispredictions;
    $('t-maxerror').textContent = fmt(t.MaxError, 3);
    $('t-shots').textContent = t.ShotsFired;
    $('t-last').textContent = t.LastMispredicted || '–';
    if (arena.truth) {
      const s = arena.truth.Shots;
      const verdicts = Object.entries(s.Verdicts || {}).filter(([, n]) => n > 0).map(([k, n]) => k + ' ' + n).join(', ');
      $('t-verdicts').textContent = s.Fired + ' fired, ' + s.Hits + ' hits, ' + s.Kills + ' kills; ' + (verdicts || 'none') +
        ' (lag compensation ' + (arena.truth.LagComp ? 'on' : 'off') + ')';
    }
    // Correction error per 100 ms, the last 10 s.
    pctx.clearRect(0, 0, plot.width, plot.height);
    const errors = t.Errors || [];
    const top = Math.max(0.25, ...errors);
    const w = plot.width / 100;
    pctx.fillStyle = '#d35400';
    errors.forEach((e, i) => {
      const h = (plot.height - 16) * e / top;
      pctx.fillRect(i * w, plot.height - h, Math.max(w - 1, 1), h);
    });
    pctx.fillStyle = '#222';
    pctx.font = '12px system-ui, sans-serif';
    pctx.fillText('correction error of your player per 100 ms, last 10 s (top ' + top.toFixed(2) + ' units)', 6, 12);
    arena.timelineUpdates++;
  };
  setInterval(timeline, 200);

  // The spectator stream and the client.
  new EventSource('truth').onmessage = e => { arena.truth = JSON.parse(e.data); };
  window.ghostwireReady = () => window.ghostwire.start(session, +$('interp').value);
  fetch('arena.json').then(r => r.json()).then(g => {
    arena.geometry = g;
    scale = (SIDE / 2 - 10) / g.HalfSize;
  });
  const go = new Go();
  WebAssembly.instantiateStreaming(fetch('client.wasm'), go.importObject)
    .then(r => go.run(r.instance))
    .catch(err => { $('status').textContent = 'the client failed: ' + err; });
  requestAnimationFrame(draw);
})();
