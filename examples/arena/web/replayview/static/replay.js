// The replay page: the server's view of a recorded match, scrubbed and
// played, and the kill-cam of a kill or a disputed shot beside it.
(() => {
  const $ = id => document.getElementById(id);
  const replay = window.replay = { tick: 0, playing: false, shot: null, drawn: 0 };
  const chunk = 600; // GET /frames' maximum
  const chunks = new Map(); // first tick of a chunk → its frames (or a pending promise)
  let info, geo;

  const frameAt = async t => {
    const start = info.First + Math.floor((t - info.First) / chunk) * chunk;
    if (!chunks.has(start)) {
      chunks.set(start, fetch(`frames?from=${start}&n=${chunk}`).then(r => r.json()));
    }
    const frames = await chunks.get(start);
    return frames[t - start];
  };

  // Both canvases show the whole arena, y up.
  const transform = c => {
    const s = c.width / (2 * geo.HalfSize);
    return { x: x => (x + geo.HalfSize) * s, y: y => c.height - (y + geo.HalfSize) * s, s };
  };
  const drawArena = (ctx, tf) => {
    ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
    ctx.fillStyle = '#99a';
    for (const w of geo.Walls) ctx.fillRect(tf.x(w[0]), tf.y(w[3]), (w[2] - w[0]) * tf.s, (w[3] - w[1]) * tf.s);
  };
  const colour = conn => `hsl(${(conn * 67) % 360} 70% 45%)`;
  const drawBody = (ctx, tf, b, ring) => {
    ctx.beginPath();
    ctx.arc(tf.x(b.X), tf.y(b.Y), geo.Radius * tf.s, 0, 2 * Math.PI);
    ctx.fillStyle = b.Alive === false ? '#ccc' : colour(b.Conn);
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(tf.x(b.X), tf.y(b.Y));
    ctx.lineTo(tf.x(b.X + Math.cos(b.Yaw) * geo.Radius * 1.6), tf.y(b.Y + Math.sin(b.Yaw) * geo.Radius * 1.6));
    ctx.strokeStyle = '#222';
    ctx.stroke();
    if (ring) { ctx.beginPath(); ctx.arc(tf.x(b.X), tf.y(b.Y), geo.Radius * tf.s + 4, 0, 2 * Math.PI); ctx.strokeStyle = ring; ctx.lineWidth = 2; ctx.stroke(); ctx.lineWidth = 1; }
  };
  const drawRay = (ctx, tf, s) => {
    ctx.beginPath();
    ctx.moveTo(tf.x(s.Origin[0]), tf.y(s.Origin[1]));
    const len = Math.min(s.Length, 4 * geo.HalfSize);
    ctx.lineTo(tf.x(s.Origin[0] + s.Dir[0] * len), tf.y(s.Origin[1] + s.Dir[1] * len));
    ctx.strokeStyle = s.Hit ? '#d22' : '#888';
    ctx.setLineDash(s.Hit ? [] : [6, 4]);
    ctx.stroke();
    ctx.setLineDash([]);
  };

  const server = $('server'), killcam = $('killcam');
  const drawServer = async () => {
    const f = await frameAt(replay.tick);
    if (!f) return;
    const ctx = server.getContext('2d'), tf = transform(server);
    drawArena(ctx, tf);
    for (const b of f.Bodies || []) drawBody(ctx, tf, b);
    const s = replay.shot;
    if (s && s.Tick === replay.tick) drawRay(ctx, tf, s);
    $('server-caption').textContent = `the server, tick ${f.Tick}`;
    $('tick').textContent = f.Tick;
    $('timeline').value = f.Tick;
  };
  const drawKillcam = () => {
    const s = replay.shot, ctx = killcam.getContext('2d'), tf = transform(killcam);
    drawArena(ctx, tf);
    for (const p of s.ShooterView || []) {
      drawBody(ctx, tf, { Conn: p.Conn, X: p.X, Y: p.Y, Yaw: p.Yaw, Alive: p.Visible }, p.Shooter ? '#222' : (p.Conn === s.Target && s.Hit ? '#d22' : null));
      ctx.strokeStyle = '#0a0';
      for (const c of p.Circles || []) { ctx.beginPath(); ctx.arc(tf.x(c[0]), tf.y(c[1]), Math.max(1, c[2] * tf.s), 0, 2 * Math.PI); ctx.stroke(); }
    }
    drawRay(ctx, tf, s);
    replay.drawn++;
    $('killcam-caption').textContent = (s.ShooterView || []).length
      ? `kill-cam: player ${s.Shooter}'s view at tick ${s.View.toFixed(2)} (judged on tick ${s.Tick})`
      : `kill-cam: player ${s.Shooter} claimed a view the server no longer held (judged on tick ${s.Tick})`;
    const target = s.Target ? `player ${s.Target}, part ${s.Part}, ${s.Distance.toFixed(2)} away` : 'no target shown';
    $('verdict').textContent = `verdict: ${s.Reason} (${target}); ` + (s.Refused
      ? `refused before the ray was cast; it would have met: ${s.CastAgain}`
      : `the kill-cam's own cast: ${s.CastAgain}`);
  };

  const show = async t => {
    replay.tick = Math.max(info.First, Math.min(info.Last, t));
    await drawServer();
  };
  const pick = async (i, li) => {
    replay.playing = false;
    $('play').textContent = 'play';
    document.querySelectorAll('aside li.current').forEach(x => x.classList.remove('current'));
    li.classList.add('current');
    const shot = await fetch(`shot?i=${i}`).then(r => r.json());
    replay.shot = shot;
    drawKillcam();
    await show(shot.Tick);
    replay.picked = (replay.picked || 0) + 1; // the jump is done: play and the timeline take over
  };
  const item = (text, i) => {
    const li = document.createElement('li');
    li.textContent = text;
    li.tabIndex = 0;
    if (i >= 0) {
      li.addEventListener('click', () => pick(i, li));
      li.addEventListener('keydown', e => { if (e.key === 'Enter') pick(i, li); });
    } else {
      li.title = 'a rocket: splash judged on the present, no kill-cam';
    }
    return li;
  };

  let last = 0;
  const loop = now => {
    if (replay.playing && last) {
      const ticks = (now - last) / 1000 * info.TickRate * Number($('speed').value);
      replay.acc = (replay.acc || 0) + ticks;
      const whole = Math.floor(replay.acc);
      if (whole > 0) {
        replay.acc -= whole;
        if (replay.tick + whole >= info.Last) { replay.playing = false; $('play').textContent = 'play'; }
        show(replay.tick + whole);
      }
    }
    last = now;
    requestAnimationFrame(loop);
  };

  // open shows a recording's Info: the timeline, the lists, the first tick.
  const open = i => {
    info = i;
    chunks.clear();
    replay.shot = null; replay.playing = false; replay.acc = 0;
    $('play').textContent = 'play';
    killcam.getContext('2d').clearRect(0, 0, killcam.width, killcam.height);
    $('killcam-caption').textContent = 'kill-cam: pick a kill or a disputed shot';
    $('verdict').textContent = '–';
    const tl = $('timeline');
    tl.min = info.First; tl.max = info.Last;
    $('kills').replaceChildren(...(info.Kills || []).map(k =>
      item(`tick ${k.Tick}: player ${k.Killer} killed player ${k.Victim} (${k.Weapon})`, k.Shot)));
    $('disputed').replaceChildren(...(info.Shots || []).filter(s => !s.Hit).map(s =>
      item(`tick ${s.Tick}: player ${s.Shooter}, ${s.Reason}`, s.Index)));
    $('status').textContent = `${info.Last - info.First + 1} ticks, ${(info.Kills || []).length} kills, ` +
      `${(info.Shots || []).filter(s => !s.Hit).length} disputed shots; ${info.Hashes} state hashes checked, every one equal`;
    replay.loaded = (replay.loaded || 0) + 1;
    return show(info.First);
  };

  Promise.all([fetch('arena.json').then(r => r.json()), fetch('info').then(r => r.json())]).then(([g, i]) => {
    geo = g;
    const tl = $('timeline');
    tl.addEventListener('input', () => show(Number(tl.value)));
    $('play').addEventListener('click', () => {
      replay.playing = !replay.playing;
      $('play').textContent = replay.playing ? 'pause' : 'play';
    });
    $('file').addEventListener('change', e => {
      const f = e.target.files[0];
      if (!f) return;
      $('status').textContent = `replaying ${f.name}…`;
      fetch('load', { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: f })
        .then(async r => {
          if (!r.ok) throw new Error(await r.text());
          return open(await r.json());
        })
        .catch(err => { $('status').textContent = `${f.name} was refused: ${err.message}`; replay.refused = (replay.refused || 0) + 1; });
    });
    open(i);
    replay.ready = true;
    requestAnimationFrame(loop);
  });
})();
