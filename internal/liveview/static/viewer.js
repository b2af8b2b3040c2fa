// The live view: frames from the session's page onto the canvas, the
// person's input back to it. The token is read from the fragment (which
// never reaches a server) and sent as the socket's first message.
(function () {
  "use strict";
  var params = new URLSearchParams(location.hash.slice(1));
  var token = params.get("t") || "";
  var watch = params.has("watch");
  // Drop the token from the address bar and history.
  history.replaceState(null, "", location.pathname);

  var canvas = document.getElementById("screen");
  var ctx2d = canvas.getContext("2d");
  var status = document.getElementById("status");
  var address = document.getElementById("address");
  var takeBtn = document.getElementById("take");
  var size = { w: canvas.width, h: canvas.height };
  var state = {};
  var frames = 0;
  if (watch) document.body.classList.add("watch");

  var id = location.pathname.split("/").pop();
  var scheme = location.protocol === "https:" ? "wss://" : "ws://";
  var ws = new WebSocket(scheme + location.host + "/ws/" + encodeURIComponent(id));
  ws.binaryType = "blob";
  ws.onopen = function () {
    ws.send(JSON.stringify({ token: token, watch: watch }));
    token = "";
    status.textContent = "connected";
  };
  ws.onclose = function (e) {
    status.textContent = "closed: " + (e.reason || e.code);
    document.body.dataset.closed = String(e.code);
  };
  var drawing = false, pending = null;
  function draw(blob) {
    if (drawing) { pending = blob; return; }
    drawing = true;
    createImageBitmap(blob).then(function (img) {
      if (canvas.width !== img.width || canvas.height !== img.height) {
        canvas.width = img.width; canvas.height = img.height;
      }
      ctx2d.drawImage(img, 0, 0);
      frames++;
      document.body.dataset.frames = String(frames);
    }).catch(function () {}).then(function () {
      drawing = false;
      if (pending) { var b = pending; pending = null; draw(b); }
    });
  }
  ws.onmessage = function (e) {
    if (typeof e.data !== "string") { draw(e.data); return; }
    var m;
    try { m = JSON.parse(e.data); } catch (_) { return; }
    if (m.t === "size") { size = { w: m.w, h: m.h }; }
    else if (m.t === "state") {
      state = m;
      if (document.activeElement !== address) address.value = m.url || "";
      takeBtn.textContent = m.taken_over ? "Give back" : "Take over";
      status.textContent = m.watch ? "watching" : (m.taken_over ? "you have the browser" : (m.person ? "you are driving" : "agent driving"));
      document.body.dataset.takenOver = String(!!m.taken_over);
    } else if (m.t === "error") { status.textContent = m.message; }
  };
  function send(m) { if (ws.readyState === 1 && !watch) ws.send(JSON.stringify(m)); }

  function mods(e) { return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0); }
  function point(e) {
    var r = canvas.getBoundingClientRect();
    return { x: (e.clientX - r.left) / r.width * size.w, y: (e.clientY - r.top) / r.height * size.h };
  }
  var names = ["left", "middle", "right"];
  function mouse(type) {
    return function (e) {
      e.preventDefault();
      if (type === "mousePressed") canvas.focus();
      var p = point(e);
      send({ t: "mouse", type: type, x: p.x, y: p.y, button: type === "mouseMoved" ? "none" : (names[e.button] || "none"),
        buttons: e.buttons, clickCount: type === "mouseMoved" ? 0 : Math.min(e.detail || 1, 3), modifiers: mods(e) });
    };
  }
  canvas.addEventListener("mousedown", mouse("mousePressed"));
  canvas.addEventListener("mouseup", mouse("mouseReleased"));
  canvas.addEventListener("mousemove", mouse("mouseMoved"));
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = point(e);
    send({ t: "wheel", x: p.x, y: p.y, dx: e.deltaX, dy: e.deltaY, modifiers: mods(e) });
  }, { passive: false });
  function key(type) {
    return function (e) {
      if (e.isComposing) return;
      // Paste is read from the paste event, not sent as keys.
      if ((e.ctrlKey || e.metaKey) && e.key === "v") return;
      e.preventDefault();
      var text = "";
      if (type === "keyDown" && !e.ctrlKey && !e.metaKey && !e.altKey) {
        if (e.key.length === 1) text = e.key;
        else if (e.key === "Enter") text = "\r";
      }
      send({ t: "key", type: type, key: e.key, code: e.code, text: text, keyCode: e.keyCode, location: e.location, modifiers: mods(e) });
    };
  }
  canvas.addEventListener("keydown", key("keyDown"));
  canvas.addEventListener("keyup", key("keyUp"));
  document.addEventListener("paste", function (e) {
    if (document.activeElement === address) return;
    e.preventDefault();
    var text = (e.clipboardData || window.clipboardData).getData("text");
    if (text) send({ t: "paste", text: text });
  });
  document.getElementById("bar").addEventListener("submit", function (e) {
    e.preventDefault();
    var u = address.value.trim();
    if (u && !/^[a-z]+:\/\//i.test(u)) u = "https://" + u;
    send({ t: "goto", url: u });
    canvas.focus();
  });
  document.getElementById("back").addEventListener("click", function () { send({ t: "back" }); });
  document.getElementById("reload").addEventListener("click", function () { send({ t: "reload" }); });
  takeBtn.addEventListener("click", function () { send({ t: state.taken_over ? "give" : "take" }); });
})();
