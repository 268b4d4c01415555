'use strict';
// The page: loads the Go client (WebAssembly), feeds it the person's
// controls, draws its view beside the server's truth and shows the
// timeline. window.arena holds what is drawn, for tests.
(() => {
  // The session outlives a reload of the tab, and with it the link the
  // server keeps for it (the sliders show it again on load).
  const session = sessionStorage.getItem('arena-session') ||
    Array.from(crypto.getRandomValues(new Uint8Array(8)), b => b.toString(16).padStart(2, '0')).join('');
  sessionStorage.setItem('arena-session', session);
  const arena = { session, view: null, truth: null, frames: 0, geometry: null, timelineUpdates: 0, linkPosts: 0, predict: true,
    settingsLoaded: false, tracers: 0, hitMarkers: 0, rocketsDrawn: 0, explosionsDrawn: 0, ballsDrawn: 0,
    killsShown: 0, chatSent: 0 };
  window.arena = arena;
  const $ = id => document.getElementById(id);
  const canvas = $('views'), ctx = canvas.getContext('2d');
  const plot = $('errors'), pctx = plot.getContext('2d');
  const SIDE = 420, TOP = 20;
  let scale = 20, predict = $('predict').checked;
  arena.predict = predict;

  // World (arena units, y up) to canvas pixels of the view at ox, and back.
  const px = (ox, x) => ox + SIDE / 2 + x * scale;
  const py = y => TOP + SIDE / 2 - y * scale;
  const world = (ox, cx, cy) => [(cx - ox - SIDE / 2) / scale, -(cy - TOP - SIDE / 2) / scale];
  // For tests: the page coordinates of a point of the client's view.
  arena.toPage = (x, y) => { const r = canvas.getBoundingClientRect(); return [r.left + px(0, x), r.top + py(y)]; };

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
  // Only a text field keeps the keys to itself; the page has none, but a
  // browser extension may add one.
  const editing = t => t.isContentEditable || t.tagName === 'TEXTAREA' ||
    (t.tagName === 'INPUT' && !['range', 'checkbox', 'radio', 'button', 'submit', 'reset', 'color'].includes(t.type));
  // The game's keys move the player whatever control was clicked last:
  // caught on the way down (capture) and kept from the focused control,
  // whose arrow keys would otherwise move a slider and change the link.
  window.addEventListener('keydown', e => {
    if (e.code === 'Enter' && !editing(e.target)) { // to the chat; sending gives the keys back
      e.preventDefault();
      chatInput.focus();
      return;
    }
    if (e.code === 'KeyE' && !editing(e.target)) { // the rocket, once per press
      e.preventDefault();
      if (!e.repeat && window.ghostwire) window.ghostwire.rocket();
      return;
    }
    if (!movementKey(e.code) || editing(e.target)) return;
    e.preventDefault();
    keys.add(e.code);
    sendControls();
  }, true);
  window.addEventListener('keyup', e => {
    if (!keys.delete(e.code)) return;
    e.preventDefault();
    sendControls();
  }, true);
  window.addEventListener('blur', () => { keys.clear(); sendControls(); });
  const aimAt = e => {
    const r = canvas.getBoundingClientRect();
    const cx = e.clientX - r.left, cy = e.clientY - r.top;
    aim = world(cx >= SIDE ? SIDE : 0, cx, cy);
    sendControls();
  };
  canvas.addEventListener('mousedown', e => {
    canvas.focus();
    aimAt(e); // a click aims where it lands, moved to or not
    if (e.button === 0 && window.ghostwire) window.ghostwire.fire();
    if (e.button === 2 && window.ghostwire) window.ghostwire.rocket();
  });
  canvas.addEventListener('contextmenu', e => e.preventDefault()); // the right button fires rockets
  canvas.addEventListener('mousemove', aimAt);

  // Chat: Enter sends the line, and the keyboard goes back to the game
  // (the canvas) whether a line was typed or not; Esc goes back without
  // sending. A line the client refused (too fast) stays, with why.
  const chatInput = $('chat-input'), chatStatus = $('chat-status');
  const backToGame = () => { chatInput.blur(); canvas.focus(); };
  chatInput.addEventListener('keydown', e => {
    if (e.isComposing) return;
    if (e.code === 'Escape') { e.preventDefault(); backToGame(); return; }
    if (e.code !== 'Enter') return;
    e.preventDefault();
    const why = window.ghostwire && chatInput.value.trim() ? window.ghostwire.say(chatInput.value) : '';
    chatStatus.textContent = why;
    if (why) return;
    if (chatInput.value.trim()) arena.chatSent++;
    chatInput.value = '';
    backToGame();
  });

  // Link sliders and presets: posted to the server for this page's
  // connection.
  const sliders = { rtt: ' ms', jitter: ' ms', loss: ' %', dup: ' %' };
  let posting = null;
  const postLink = () => {
    clearTimeout(posting);
    posting = setTimeout(() => {
      const body = JSON.stringify({ RTTms: +$('rtt').value, JitterMS: +$('jitter').value, LossPct: +$('loss').value, DupPct: +$('dup').value });
      fetch('link?session=' + session, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })
        .then(() => arena.linkPosts++);
    }, 50);
  };
  const showSlider = id => { $(id + '-v').textContent = $(id).value + sliders[id]; };
  for (const id of Object.keys(sliders)) {
    $(id).addEventListener('input', () => { showSlider(id); postLink(); });
    showSlider(id);
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
  $('interp').addEventListener('change', e => startClient(+e.target.value));
  // Lag compensation is the server's, for every page: the checkbox follows
  // the server's truth, except while this page's own switch is on its way.
  let lagcompPending = null;
  $('lagcomp').addEventListener('change', e => {
    const on = e.target.checked;
    lagcompPending = on;
    fetch('lagcomp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ On: on }) })
      .then(r => { if (!r.ok) lagcompPending = null; }, () => { lagcompPending = null; });
  });
  const followLagComp = on => {
    if (lagcompPending === on) lagcompPending = null;
    if (lagcompPending === null) $('lagcomp').checked = on;
  };
  // A control gives the keyboard back once used (see keydown above); the
  // chat's box does when its line is sent.
  for (const c of document.querySelectorAll('aside input:not(#chat-input), aside select')) c.addEventListener('change', () => c.blur());
  for (const b of document.querySelectorAll('aside button')) b.addEventListener('click', () => b.blur());

  // The server's state on load: lag compensation, and this session's link.
  fetch('settings?session=' + session).then(r => r.json()).then(st => {
    followLagComp(st.LagComp);
    // The server's own settings change only where it allows (-web-settings).
    $('lagcomp').disabled = !st.ServerSettings;
    $('lagcomp').title = st.ServerSettings ? '' : 'the server does not let pages change it (-web-settings)';
    const link = { rtt: st.Link.RTTms, jitter: st.Link.JitterMS, loss: st.Link.LossPct, dup: st.Link.DupPct };
    for (const [id, v] of Object.entries(link)) { $(id).value = v; showSlider(id); }
    arena.settingsLoaded = true;
  });

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
    if (b.HP <= 0) { // the respawn timer
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(b.RespawnS > 0 ? b.RespawnS.toFixed(1) + ' s' : 'now', x, y - r - 9);
      ctx.textAlign = 'start';
    }
  };
  // A shot's tracer, from the server's verdict, fading out; a hit marker
  // where it hit.
  const drawShot = s => {
    const fade = Math.max(0, 1 - s.AgeMS / 600);
    const x0 = px(0, s.FromX), y0 = py(s.FromY), x1 = px(0, s.ToX), y1 = py(s.ToY);
    ctx.globalAlpha = fade;
    ctx.strokeStyle = s.Hit ? '#e67e22' : '#95a5a6';
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
    arena.tracers++;
    if (s.Hit) {
      ctx.strokeStyle = '#d35400';
      ctx.lineWidth = 3;
      ctx.beginPath();
      for (const [dx, dy] of [[1, 1], [1, -1]]) {
        ctx.moveTo(x1 - 7 * dx, y1 - 7 * dy);
        ctx.lineTo(x1 + 7 * dx, y1 + 7 * dy);
      }
      ctx.stroke();
      arena.hitMarkers++;
    }
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1;
  };
  // A rocket: a dot, the own ones (predicted) orange, the others' red.
  const drawRocket = (ox, r, own) => {
    ctx.fillStyle = own ? '#e67e22' : '#8e1b10';
    ctx.beginPath();
    ctx.arc(px(ox, r.X), py(r.Y), Math.max(3, arena.geometry.RocketRadius * scale), 0, 2 * Math.PI);
    ctx.fill();
    arena.rocketsDrawn++;
  };
  // An explosion: the splash's reach, fading out.
  const drawExplosion = x => {
    const k = Math.min(x.AgeMS / 400, 1);
    ctx.globalAlpha = 1 - k;
    ctx.strokeStyle = '#d35400';
    ctx.lineWidth = 3;
    ctx.beginPath();
    ctx.arc(px(0, x.X), py(x.Y), (0.3 + k * 0.7) * (arena.geometry.Radius + arena.geometry.SplashRadius) * scale, 0, 2 * Math.PI);
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1;
    arena.explosionsDrawn++;
  };
  // The ball, ringed green while this client predicts it.
  const drawBall = (ox, b) => {
    ctx.fillStyle = '#f1c40f';
    ctx.strokeStyle = b.Predicted ? '#1a8f3a' : '#7d6608';
    ctx.lineWidth = b.Predicted ? 3 : 1.5;
    ctx.beginPath();
    ctx.arc(px(ox, b.X), py(b.Y), arena.geometry.BallRadius * scale, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
    ctx.lineWidth = 1;
    arena.ballsDrawn++;
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
    for (const s of v.Shots || []) drawShot(s);
    if (v.HasBall) drawBall(0, v.Ball);
    for (const r of v.Rockets || []) drawRocket(0, r, r.Own);
    for (const x of v.Explosions || []) drawExplosion(x);
    if (v.HasOwn && v.Own.HP <= 0) {
      ctx.fillStyle = '#c0392b';
      ctx.font = 'bold 16px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText('you are down: back in ' + v.Own.RespawnS.toFixed(1) + ' s', SIDE / 2, TOP + 24);
      ctx.textAlign = 'start';
    }
    if (arena.truth) {
      const t = arena.truth;
      for (const p of t.Players) drawBody(SIDE, p, v.HasOwn && p.Ghost === v.Own.Ghost ? '#1a8f3a' : '#c0392b');
      if (t.HasBall) drawBall(SIDE, t.Ball);
      const me = v.HasOwn ? t.Players.find(p => p.Ghost === v.Own.Ghost) : undefined;
      for (const r of t.Rockets || []) drawRocket(SIDE, r, me !== undefined && r.Owner === me.Owner);
    }
    const via = JSON.parse(window.ghostwire.transport());
    arena.transportUsed = via;
    $('status').textContent = v.State + (via.Name ? ' over ' + (via.Name === 'webtransport' ? 'WebTransport' : 'WebSocket') : '') +
      (v.Err ? ': ' + v.Err : '');
    $('status').title = via.Fallback ? 'WebTransport not used: ' + via.Fallback : '';
    showFeeds(v);
  };

  // The kill feed and the chat, as lists; rebuilt only when they change.
  // Players are named by their connection, the own one "you"; the text
  // goes in as text, never as markup: a line of chat is anyone's.
  const who = (conn, v) => (conn === v.Conn ? 'you' : 'player ' + conn);
  const span = (text, cls) => { const s = document.createElement('span'); s.textContent = text; if (cls) s.className = cls; return s; };
  let killsKey = '', chatKey = '';
  const showFeeds = v => {
    const kills = v.Kills || [], lines = v.Chat || [];
    const kk = JSON.stringify(kills.map(k => [k.Killer, k.Victim, k.Weapon, v.Conn])) + v.KillsReceived;
    if (kk !== killsKey) {
      killsKey = kk;
      $('killfeed').replaceChildren(...kills.map(k => {
        const li = document.createElement('li');
        li.append(span(who(k.Killer, v), k.Killer === v.Conn ? 'you' : ''), span(k.Weapon === 'rocket' ? ' ◎ rocket ' : ' ━ gun ', 'weapon'),
          span(who(k.Victim, v), k.Victim === v.Conn ? 'you' : ''));
        return li;
      }));
      arena.killsShown = kills.length;
    }
    // Fading out over the last second they are shown (play.KillShown, 8 s).
    const items = $('killfeed').children;
    kills.forEach((k, i) => { if (items[i]) items[i].style.opacity = Math.min(1, Math.max(0, 8 - k.AgeS)); });
    const ck = JSON.stringify(lines) + v.Conn;
    if (ck !== chatKey) {
      chatKey = ck;
      $('chat-log').replaceChildren(...lines.map(l => {
        const li = document.createElement('li');
        li.append(span(who(l.From, v) + ': ', l.From === v.Conn ? 'you' : 'from'), span(l.Text));
        return li;
      }));
    }
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
    $('t-corrections').textContent = t.Corrections;
    $('t-respawns').textContent = t.Respawns;
    $('t-hits').textContent = t.Hits + ' of ' + t.Judged;
    $('t-maxerror').textContent = fmt(t.MaxError, 3);
    $('t-shots').textContent = t.ShotsFired;
    $('t-rockets').textContent = t.RocketsPredicted + ' predicted, ' + t.RocketsMatched + ' taken over by the server, ' +
      t.RocketsRemoved + ' refused';
    $('t-ball').textContent = (v.HasBall && v.Ball.Predicted ? 'yes' : 'no') + ' (' + t.BallSwitches + ' times)';
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
  new EventSource('truth').onmessage = e => {
    arena.truth = JSON.parse(e.data);
    followLagComp(arena.truth.LagComp);
  };
  // The transport: the server's /transport.json says where WebTransport
  // is; ?transport=webtransport or ?transport=websocket in the page's
  // address forces one for this page.
  const forced = new URLSearchParams(location.search).get('transport');
  const transports = fetch('transport.json').then(r => r.json()).then(t => {
    if (forced === 'webtransport' || forced === 'websocket') t.Mode = forced;
    arena.transports = t;
    return t;
  });
  const startClient = delay => transports.then(t => window.ghostwire.start(session, delay, t));
  window.ghostwireReady = () => startClient(+$('interp').value);
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
