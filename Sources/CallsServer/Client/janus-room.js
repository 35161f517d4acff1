// The browser client of a room that runs on a Janus VideoRoom instead of a mesh, through Debian's
// janus.js (and adapter.js, which janus.js reads). Plain JavaScript, nothing loaded from elsewhere.
// GET /sfu/NAME?t=TOKEN says where Janus is (a path on this host, which the server proxies, or an
// absolute ws:// URL), the VideoRoom's id and its PIN. The page never creates or destroys rooms.
// It joins as a publisher with its name and publishes the camera and microphone on that handle
// (or only watches and listens, and says so, when getUserMedia fails); that handle also hears who
// publishes and who goes. Each other publisher gets a subscriber handle of its own and a tile.
// "Share screen" publishes the screen on a second publisher handle, "NAME (screen)", simulcast in
// janus.js's three layers (full, half and quarter size; Chromium leaves out the smallest for a
// screen below about 960x540); Janus sends each viewer the top layer unless asked for another.
// A simulcast feed's layer is chosen by the page from what arrives (layerrule.js, the rule sharectl's
// watch uses); tests read window.janusRoomFigures() and ask for a layer with window.janusRoomSubstream(id, n).
// Beside Janus the page is on the room's own socket (/ws/ROOM, docs/room-protocol.md), as a mesh
// page is: names, resume, its screen announced as `share` with the mid janus:FEED, once a second a
// `media` report of what it decodes of each sharer's screen (stalled after 4 s without a frame),
// and a sharer's `restart` signal, on which it subscribes to that screen afresh (a new handle,
// connection and decoder): the sharer's watchdog climbs its ladder on those reports as on
// sharectl viewers'. As a sharer the page climbs that ladder itself (ladder.js, the rules of
// sharectl's ReceiverLadder) on the others' reports of its screen: the notice, then a `restart`
// signal to the one viewer (its rebuild: that viewer subscribes afresh, and Janus asks us for a
// keyframe), then its share again (the screen published anew from the same track, on a new
// handle, announced under the new feed), then the give-up notice. Each change of its status is
// logged to the console as "sharectl-watchdog {JSON}" (the scenario runner reads Chromium's log).
// `?share=1` shares the screen once joined. A page armed for faults (?faults=on, or ?fault=decoder-wedge@S) can wedge
// its decoder of the screens it watches (wedge-worker.js), which a restart ends.
// ICE in the gate namespace: Janus gathers only on 127.0.0.2 and drops remote candidates on
// 127.0.0.1. Chromium with --allow-loopback-in-peer-connection offers every 127.x address, as raw
// addresses rather than mDNS names while the page holds a capture (scripts/peers/janus_viewer.html).
'use strict';

(() => {
  const params = new URLSearchParams(location.search);
  const roomName = decodeURIComponent(location.pathname.split('/').filter(Boolean)[1] || '');
  const token = params.get('t') || '';
  const FIGURES_MS = 1000;        // getStats() this often for janusRoomFigures()
  const ANSWER_MS = 5000;         // janusRoomSubstream gives up waiting for Janus after this long
  const wsURL = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/${encodeURIComponent(roomName)}?t=${encodeURIComponent(token)}`;

  const $ = (id) => document.getElementById(id);
  const figures = {
    state: 'joining', error: null, name: null, room: null,
    publishing: { video: false, audio: false, screen: false }, feeds: [],
    // the room's own socket: our id there, the people in the room, and what went over it
    presence: { connected: false, id: null, welcomes: 0, resumes: 0, reconnects: 0, people: [], reportsSent: 0,
                restartsAsked: 0, restarts: 0, lastReport: null },
    faults: [],
    // our screen as a sharer: its feed, what left of it (summed over its layers), the ladder's
    // status and what it did
    sharing: { feedId: null, framesSent: 0, keyframesSent: 0, publishes: 0, restartsSent: 0, sharesAgain: 0,
               watchdog: null },
  };
  const feeds = new Map();        // publisher id -> Feed, our subscription to it
  const ownIds = new Set();       // our own publisher ids (camera, screen): never subscribed to
  let sfu = null;                 // the /sfu answer: { sfu, janus, room, pin }
  let janus = null;
  let camera = null;              // the publisher handle of our camera and microphone
  let privateId = null;           // the camera handle's private_id, given with each subscription
  let localStream = null;
  let screen = null;              // { stream, handle, tile } while sharing
  let leaving = false;
  // the room's own socket
  let socket = null;
  let resumeKey = null;
  let retryMs = 250;
  const people = new Map();       // room id -> { id, name, sharing, mid, viewOfMe }

  function describe(error) {
    if (!error) return 'unknown error';
    if (typeof error === 'string') return error;
    return error.message || JSON.stringify(error);
  }
  function setStatus(text) { $('status').textContent = text; }
  // A notice; one with a key (the ladder's) is replaced by the next of that key and taken away
  // with takeNotice(key) when it no longer holds.
  function notice(text, key) {
    if (key) takeNotice(key);
    const li = document.createElement('li');
    li.textContent = text;
    if (key) li.dataset.key = key;
    $('notices').prepend(li);
    while ($('notices').children.length > 5) $('notices').lastChild.remove();
  }
  function takeNotice(key) {
    for (const li of [...$('notices').children]) if (li.dataset.key === key) li.remove();
  }
  function fail(what, error) {
    if (leaving) return;
    figures.state = 'error';
    figures.error = `${what}: ${describe(error)}`;
    setStatus(`Error: ${figures.error}`);
  }
  function updateStatus() {
    if (figures.state !== 'joined') return;
    // a person's second feed, "NAME (screen)", is not another person; a sharectl sharer's one feed is
    const others = [...feeds.values()].filter((feed) => !feed.secondFeed).length;
    const screens = [...feeds.values()].filter((feed) => feed.screen).length;
    let text = `In the room: ${others} other${others === 1 ? '' : 's'}`;
    if (screens) text += `, ${screens} screen${screens === 1 ? '' : 's'} shared`;
    if (!localStream) text += ' (watching and listening only)';
    const names = [...people.values()].map((person) => person.name);
    if (names.length) text += ` — ${names.join(', ')}`;
    setStatus(text);
  }
  const hasTrack = (kind) => !!localStream && localStream.getTracks().some((track) => track.kind === kind);

  function tile(caption) {
    const element = document.createElement('figure');
    const video = document.createElement('video');
    video.autoplay = true;
    video.playsInline = true;
    video.muted = true;
    const text = document.createElement('figcaption');
    text.textContent = caption;
    element.append(video, text);
    return { figure: element, video };
  }

  // Janus's WebSocket: a path on this host (with our token), or an absolute ws:// URL as it is.
  function janusURL(where) {
    if (/^wss?:\/\//.test(where)) return where;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${location.host}${where}?t=${encodeURIComponent(token)}`;
  }

  // A VideoRoom request for this room; a join carries the room's PIN when it has one.
  const request = (fields) => ({ room: sfu.room, ...fields });
  const joinRequest = (fields) => request({ request: 'join', ...(sfu.pin ? { pin: sfu.pin } : {}), ...fields });

  // MARK: the room's own socket: names, resume, share announcements, reports, restart requests

  function roomSend(message) {
    if (socket && socket.readyState === WebSocket.OPEN && figures.presence.connected) socket.send(JSON.stringify(message));
  }

  function connectRoom() {
    const ws = new WebSocket(wsURL);
    socket = ws;
    ws.onopen = () => {
      retryMs = 250;
      const join = { type: 'join', name: figures.name };
      if (resumeKey) join.resume = resumeKey;
      ws.send(JSON.stringify(join));
    };
    ws.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      receiveRoom(message);
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      figures.presence.connected = false;
      if (leaving || event.code === 4000) return;
      // back again with our resume key: the same id and place, nobody hears we were gone
      figures.presence.reconnects += 1;
      setTimeout(connectRoom, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }

  function receiveRoom(message) {
    switch (message.type) {
      case 'welcome': {
        const resumed = figures.presence.id !== null && message.id === figures.presence.id;
        figures.presence.id = message.id;
        figures.presence.welcomes += 1;
        if (resumed) figures.presence.resumes += 1;
        resumeKey = message.resume;
        figures.presence.connected = true;
        people.clear();
        for (const peer of message.peers || []) people.set(peer.id, { id: peer.id, name: peer.name, sharing: !!peer.sharing, mid: peer.mid || null, viewOfMe: null });
        // a fresh place (first join, or the old one lost): our screen is said again
        if (!resumed && screen && screen.feedId !== undefined && figures.publishing.screen) announceScreen(true, screen.feedId);
        if (figures.presence.welcomes === 1) scheduleFaultFromURL();
        break;
      }
      case 'joined':
        if (message.peer) people.set(message.peer.id, { id: message.peer.id, name: message.peer.name, sharing: !!message.peer.sharing, mid: message.peer.mid || null, viewOfMe: null });
        break;
      case 'left':
        people.delete(message.id);
        break;
      case 'share': {
        const person = people.get(message.from);
        if (person) Object.assign(person, { sharing: !!message.on, mid: message.on ? message.mid || null : null });
        break;
      }
      case 'media': {
        // what someone decodes of our screen (their report under our room id), for our ladder
        const person = people.get(message.from);
        if (person) {
          const mine = (message.screens || []).find((screen) => screen.from === figures.presence.id);
          person.viewOfMe = mine ? { framesDecoded: mine.framesDecoded ?? null, screenStalled: mine.screenStalled === true } : null;
        }
        break;
      }
      case 'signal':
        // a sharer's rebuild for us: its screen subscribed afresh
        if (message.kind === 'restart') {
          figures.presence.restartsAsked += 1;
          for (const feed of [...feeds.values()]) {
            const person = feed.person();
            if (person && person.id === message.from) restartFeed(feed, `${person.name} asked`);
          }
        }
        break;
      default:
        break;
    }
    figures.presence.people = [...people.values()].map(({ viewOfMe, ...person }) => ({ ...person }));
    updateStatus();
  }

  function announceScreen(on, feedId) {
    roomSend(on ? { type: 'share', on: true, mid: `janus:${feedId}` } : { type: 'share', on: false });
  }

  // Once a second: what we decode of each sharer's screen, under the sharer's room id.
  function reportMedia() {
    if (!figures.presence.connected) return;
    const now = performance.now();
    const screens = [];
    for (const feed of feeds.values()) {
      const report = feed.report(now);
      if (report) screens.push(report);
    }
    const report = { type: 'media', screens, hearing: [], cameras: [] };
    roomSend(report);
    figures.presence.reportsSent += 1;
    figures.presence.lastReport = screens;
    climbLadder(Date.now());
  }

  // MARK: the receiver-driven ladder, as a sharer

  const ladder = new SharectlLadder.ReceiverLadder();
  const ladderStatus = new SharectlLadder.LadderStatus();
  let lastLogged = null;

  // Once a second, on the reports of our screen (whoever reports it: as sharectl's sharer on
  // Janus): everyone is fed from our one feed, so what left of it left for each of them.
  function climbLadder(now) {
    const observed = {};
    const share = screen;
    if (share && share.feedId !== undefined && figures.publishing.screen) {
      for (const person of people.values()) {
        const view = person.viewOfMe;
        if (!view) continue;
        observed[person.id] = { name: person.name, stalled: view.screenStalled === true,
                                framesSent: figures.sharing.framesSent, keyframesSent: figures.sharing.keyframesSent,
                                framesDecoded: view.framesDecoded === undefined ? null : view.framesDecoded };
      }
    }
    const steps = ladder.tick(now, observed);
    for (const taken of steps) carryOut(taken);
    const t = share ? Math.round((now - share.since) / 100) / 10 : 0;
    figures.sharing.watchdog = ladderStatus.publish(ladder, steps, t);
    const line = JSON.stringify(figures.sharing.watchdog);
    if (share && line !== lastLogged) {
      lastLogged = line;
      console.log(`sharectl-watchdog ${line}`);
    }
  }

  function carryOut(taken) {
    const { action } = taken;
    switch (action.name) {
      case 'notice':
        if (action.text === null) takeNotice(`ladder:${action.subject}`);
        else notice(action.text, `ladder:${action.subject}`);
        return;
      case 'rebuild':
        // that viewer subscribes to our feed afresh; Janus asks us for a keyframe for it
        figures.sharing.restartsSent += 1;
        roomSend({ type: 'signal', to: action.subject, kind: 'restart' });
        return;
      case 'shareAgain':
        shareAgain();
        return;
      default:
        // keyframe: the viewer's own PLIs reach us through Janus (a page cannot ask its encoder
        // for one); held, recovered and giveUp change nothing here (the notice says it).
    }
  }

  // A new subscription to the same publisher: a new handle, connection, receiver and decoder.
  function restartFeed(feed, why) {
    if (feeds.get(feed.id) !== feed) return;
    feed.close();
    const fresh = new Feed(feed.publisher);
    fresh.restarts = feed.restarts + 1;
    feeds.set(feed.id, fresh);
    figures.presence.restarts += 1;
    notice(`Watching ${feed.display} afresh (${why})`);
    updateFaults();
  }

  // MARK: joining, and our camera's publisher handle

  async function join(name) {
    figures.name = name;
    $('join-form').hidden = true;
    setStatus('Starting camera and microphone…');
    try {
      localStream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
      const self = tile(name);
      self.figure.classList.add('self');
      self.video.srcObject = localStream;
      $('tiles').prepend(self.figure);
    } catch (error) {
      localStream = null;
      notice(`No camera or microphone (${describe(error)}); joining to watch and listen only`);
    }
    setStatus('Joining…');
    try {
      const response = await fetch(`/sfu/${encodeURIComponent(roomName)}?t=${encodeURIComponent(token)}`, { cache: 'no-store' });
      if (!response.ok) throw new Error(`the server answered ${response.status} ${(await response.text()).trim()}`);
      sfu = await response.json();
      if (sfu.sfu !== 'janus' || !sfu.janus || !Number.isFinite(sfu.room)) throw new Error(`not a Janus room (${JSON.stringify(sfu)})`);
    } catch (error) {
      fail('Could not find the room', error);
      return;
    }
    figures.room = sfu.room;
    $('leave').hidden = false;
    connectRoom();
    Janus.init({ debug: ['warn', 'error'], dependencies: Janus.useDefaultDependencies(), callback: connect });
    setInterval(refreshFigures, FIGURES_MS);
    setInterval(reportMedia, 1000);
  }

  function connect() {
    janus = new Janus({
      server: janusURL(sfu.janus),
      iceServers: [],
      success: () => janus.attach({
        plugin: 'janus.plugin.videoroom',
        success: (handle) => {
          camera = handle;
          camera.send({ message: joinRequest({ ptype: 'publisher', display: figures.name }) });
        },
        error: (error) => fail('Could not reach the room', error),
        onmessage: onCameraMessage,
        webrtcState: (up) => {
          figures.publishing.audio = up && hasTrack('audio');
          figures.publishing.video = up && hasTrack('video');
        },
      }),
      error: (error) => sessionLost(error),
      destroyed: () => { if (!leaving) sessionLost('the session ended'); },
    });
  }

  // Nothing is published or received once the session with Janus is gone.
  function sessionLost(error) {
    figures.publishing = { video: false, audio: false, screen: false };
    $('share').hidden = true;
    fail('Disconnected from the room', error);
  }

  function onCameraMessage(message, jsep) {
    if (jsep) camera.handleRemoteJsep({ jsep, error: (error) => fail('Janus refused our camera', error) });
    if (message.error) {
      fail(figures.state === 'joined' ? 'The room refused a request' : 'Could not join the room',
           `${message.error} (${message.error_code})`);
      return;
    }
    if (message.videoroom === 'joined') {
      ownIds.add(message.id);
      privateId = message.private_id ?? null;
      figures.state = 'joined';
      if (localStream) publishCamera();
      subscribeAll(message.publishers);
      if (navigator.mediaDevices && navigator.mediaDevices.getDisplayMedia) $('share').hidden = false;
      updateStatus();
      if (params.get('share') === '1' && !screen) startShare();
    } else if (message.videoroom === 'event') {
      subscribeAll(message.publishers);
      // "ok" answers our own unpublish or leave; an id is someone else's feed going
      for (const gone of [message.unpublished, message.leaving]) {
        if (gone !== undefined && gone !== 'ok') unsubscribe(gone);
      }
    } else if (message.videoroom === 'destroyed') {
      fail('The room is gone', 'it was closed on the server');
    }
  }

  function publishCamera() {
    camera.createOffer({
      tracks: localStream.getTracks().map((track) => ({ type: track.kind, capture: track, recv: false })),
      success: (offer) => camera.send({ message: request({ request: 'configure', audio: hasTrack('audio'), video: hasTrack('video') }),
                                        jsep: offer }),
      error: (error) => fail('Could not publish the camera', error),
    });
  }

  // MARK: the others' feeds, one subscriber handle each

  function subscribeAll(publishers) {
    for (const publisher of publishers || []) {
      if (ownIds.has(publisher.id) || feeds.has(publisher.id)) continue;
      feeds.set(publisher.id, new Feed(publisher));
    }
    updateStatus();
  }

  function unsubscribe(id) {
    const feed = feeds.get(id);
    if (!feed) return;
    feeds.delete(id);
    feed.close();
    updateStatus();
  }

  class Feed {
    constructor(publisher) {
      this.publisher = publisher;
      this.id = publisher.id;
      this.restarts = 0;
      this.receiver = null;        // our video receiver (armed for faults when the page is)
      this.wedged = false;         // its decoder swallows every frame (a fault)
      this.stall = new ScreenStall(performance.now());
      this.display = publisher.display || `Feed ${publisher.id}`;
      // a screen goes on the stage: ours are called "NAME (screen)", a sharectl sharer's is simulcast
      this.secondFeed = / \(screen\)$/.test(this.display);
      this.simulcast = (publisher.streams || []).some((stream) => stream.type === 'video' && stream.simulcast);
      this.screen = this.secondFeed || this.simulcast;
      // A simulcast feed's layer is ours to choose, once a second, from what arrives (layerrule.js);
      // a feed is taken as simulcast once Janus says which of its substreams it sends.
      this.layers = new SubscriberLayerRule(2);
      this.previous = null;
      this.handle = null;
      this.videoMid = null;        // our subscription's video mid, from Janus's "attached"
      this.pending = null;         // janusRoomSubstream's promise, settled by Janus's answer
      this.closed = false;
      this.figures = { id: this.id, display: this.display, framesDecoded: 0, frameWidth: 0, frameHeight: 0,
                       framesPerSecond: 0, codec: null, audioSamplesReceived: 0, audioEnergy: 0, substream: null,
                       layerAsked: null, localAddress: null, localPort: null, person: null, restarts: 0,
                       screenStalled: false };
      this.tile = tile(this.display);
      this.audio = document.createElement('audio');
      this.audio.autoplay = true;
      this.tile.figure.append(this.audio);
      $(this.screen ? 'stage' : 'tiles').append(this.tile.figure);
      janus.attach({
        plugin: 'janus.plugin.videoroom',
        success: (handle) => {
          if (this.closed) { handle.detach(); return; }
          this.handle = handle;
          const join = joinRequest({ ptype: 'subscriber', streams: [{ feed: this.id }] });
          if (privateId !== null) join.private_id = privateId;
          handle.send({ message: join });
        },
        error: (error) => notice(`Could not watch ${this.display}: ${describe(error)}`),
        onmessage: (message, jsep) => this.onmessage(message, jsep),
        onremotetrack: (track, mid, on) => {
          // janus.js says "off" for a track muted a while, too: the tile stays until the feed goes
          if (!on) return;
          if (track.kind === 'video') {
            const pc = this.handle && this.handle.webrtcStuff && this.handle.webrtcStuff.pc;
            const receiver = pc && pc.getReceivers().find((r) => r.track === track);
            if (receiver && receiver !== this.receiver) {
              this.receiver = receiver;
              armReceiver(receiver);
              if (this.wedged) setDropping(receiver, true);
            }
          }
          (track.kind === 'video' ? this.tile.video : this.audio).srcObject = new MediaStream([track]);
        },
      });
    }

    onmessage(message, jsep) {
      if (message.error) {
        notice(`Could not watch ${this.display}: ${message.error}`);
        this.settle({ ok: false, error: `${message.error} (${message.error_code})` });
      }
      if (message.videoroom === 'attached' || message.videoroom === 'updated') {
        const video = (message.streams || []).find((stream) => stream.type === 'video');
        if (video) this.videoMid = video.mid;
      }
      // the simulcast layer Janus now sends us (at the first packet, and after each switch)
      if (message.substream !== undefined) this.figures.substream = message.substream;
      if (message.configured === 'ok') this.settle({ ok: true });
      if (!jsep) return;
      this.handle.createAnswer({
        jsep,
        success: (answer) => this.handle.send({ message: request({ request: 'start' }), jsep: answer }),
        error: (error) => notice(`Could not watch ${this.display}: ${describe(error)}`),
      });
    }

    // The person in the room whose screen this feed is (announced as janus:FEED), or null.
    person() {
      for (const person of people.values()) if (person.sharing && person.mid === `janus:${this.id}`) return person;
      return null;
    }

    // This second's report of the screen, under its sharer's room id; null for a feed no one in
    // the room announced (a camera, or a sharer not on the room's socket).
    report(now) {
      const person = this.person();
      this.figures.person = person ? person.id : null;
      this.figures.restarts = this.restarts;
      if (!person) return null;
      const frames = this.figures.framesDecoded;
      const stalled = this.stall.observe(frames, now);  // screenstall.js
      this.figures.screenStalled = stalled;
      return { from: person.id, framesDecoded: frames, screenStalled: stalled };
    }

    // Asks Janus for simulcast layer `n` (0 the smallest); settles with Janus's answer.
    askSubstream(n) {
      if (!this.handle || this.videoMid === null) {
        return Promise.resolve({ ok: false, error: `no video from ${this.display} (yet)` });
      }
      this.settle({ ok: false, error: 'asked again before Janus answered' });
      return new Promise((resolve) => {
        const timer = setTimeout(() => this.settle({ ok: false, error: `Janus did not answer in ${ANSWER_MS / 1000} s` }), ANSWER_MS);
        this.pending = (result) => { clearTimeout(timer); resolve(result); };
        this.handle.send({ message: request({ request: 'configure', streams: [{ mid: this.videoMid, substream: n }] }),
                           error: (error) => this.settle({ ok: false, error: describe(error) }) });
      });
    }

    settle(result) {
      const pending = this.pending;
      this.pending = null;
      if (pending) pending(result);
    }

    async refresh() {
      const pc = this.handle && this.handle.webrtcStuff && this.handle.webrtcStuff.pc;
      if (!pc) return;
      const stats = await pc.getStats();
      const codecs = {};
      const candidates = {};
      const pairs = {};
      let video = null;
      let selected = null;
      stats.forEach((r) => {
        if (r.type === 'codec') codecs[r.id] = r.mimeType;
        if (r.type === 'local-candidate') candidates[r.id] = r;
        if (r.type === 'candidate-pair') pairs[r.id] = r;
        if (r.type === 'transport' && r.selectedCandidatePairId) selected = r.selectedCandidatePairId;
      });
      const pair = pairs[selected] || Object.values(pairs).find((r) => r.nominated && r.state === 'succeeded');
      stats.forEach((r) => {
        if (r.type !== 'inbound-rtp') return;
        if (r.kind === 'video') {
          video = r;
          Object.assign(this.figures, { framesDecoded: r.framesDecoded || 0, frameWidth: r.frameWidth || 0,
                                        frameHeight: r.frameHeight || 0, framesPerSecond: r.framesPerSecond || 0,
                                        codec: codecs[r.codecId] || null });
        } else if (r.kind === 'audio') {
          Object.assign(this.figures, { audioSamplesReceived: r.totalSamplesReceived || 0, audioEnergy: r.totalAudioEnergy || 0 });
        }
      });
      const local = pair && candidates[pair.localCandidateId];
      if (local) Object.assign(this.figures, { localAddress: local.address || local.ip || null, localPort: local.port || null });
      if (video) this.judgeLayer(video);
    }

    // One second of what arrived, for the layer rule; a change is asked of Janus.
    judgeLayer(video) {
      const now = performance.now();
      const totals = { at: now, packets: video.packetsReceived || 0, lost: video.packetsLost || 0,
                       frames: video.framesDecoded || 0, bytes: video.bytesReceived || 0 };
      const previous = this.previous;
      this.previous = totals;
      if (this.figures.substream === null || !previous || now - previous.at < 500) return;
      const seconds = (now - previous.at) / 1000;
      const next = this.layers.update({
        now, packets: totals.packets - previous.packets, lost: totals.lost - previous.lost,
        framesDecoded: totals.frames - previous.frames, queuingDelayMs: null,
        receivedKbps: Math.round((totals.bytes - previous.bytes) * 8 / seconds / 1000),
      });
      this.figures.layerAsked = this.layers.layer;
      if (next !== null) {
        this.askSubstream(next).then((answer) => {
          if (!answer.ok) notice(`Janus did not take layer ${next} of ${this.display}: ${answer.error}`);
        });
      }
    }

    close() {
      this.closed = true;
      if (this.receiver && this.wedged) setDropping(this.receiver, false);
      this.settle({ ok: false, error: `${this.display} stopped publishing` });
      if (this.handle) this.handle.detach();
      this.tile.figure.remove();
    }
  }

  // What left of our screen on its publisher connection, summed over the simulcast layers (they
  // start again from zero on a new handle).
  async function refreshSent() {
    const share = screen;
    const pc = share && share.handle && share.handle.webrtcStuff && share.handle.webrtcStuff.pc;
    if (!pc) return;
    let frames = 0;
    let keyframes = 0;
    (await pc.getStats()).forEach((r) => {
      if (r.type !== 'outbound-rtp' || r.kind !== 'video') return;
      frames += r.framesSent || 0;
      keyframes += r.keyFramesEncoded || 0;
    });
    if (screen !== share) return;
    figures.sharing.framesSent = frames;
    figures.sharing.keyframesSent = keyframes;
  }

  async function refreshFigures() {
    await Promise.all([...feeds.values()].map((feed) => feed.refresh().catch(() => {})).concat(refreshSent().catch(() => {})));
    figures.feeds = [...feeds.values()].map((feed) => ({ ...feed.figures }));
  }

  // MARK: sharing the screen, a publisher handle of its own

  async function startShare() {
    if (screen || !janus) return;
    let stream;
    try {
      stream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
    } catch (error) {
      notice(`Could not share the screen: ${describe(error)}`);
      return;
    }
    const share = screen = { stream, handle: null, tile: tile(`${figures.name}'s screen`), since: Date.now() };
    const track = stream.getVideoTracks()[0];
    track.onended = () => { if (screen === share) stopShare(); };
    share.tile.figure.classList.add('self');
    share.tile.video.srcObject = stream;
    $('stage').prepend(share.tile.figure);
    $('share').textContent = 'Stop sharing';
    publishScreen(share);
  }

  // Our screen on a publisher handle of its own, "NAME (screen)", announced under its feed id.
  function publishScreen(share) {
    const track = share.stream.getVideoTracks()[0];
    const failed = (error) => {
      notice(`Could not share the screen: ${describe(error)}`);
      if (screen === share) stopShare();
    };
    figures.sharing.publishes += 1;
    let mine = null;
    janus.attach({
      plugin: 'janus.plugin.videoroom',
      success: (handle) => {
        mine = handle;
        share.handle = handle;
        if (screen !== share) { handle.detach(); return; }
        handle.send({ message: joinRequest({ ptype: 'publisher', display: `${figures.name} (screen)` }) });
      },
      error: failed,
      onmessage: (message, jsep) => {
        if (jsep && mine) mine.handleRemoteJsep({ jsep, error: failed });
        if (message.error) { if (share.handle === mine) failed(`${message.error} (${message.error_code})`); return; }
        if (message.videoroom !== 'joined' || screen !== share || share.handle !== mine) return;
        ownIds.add(message.id);
        share.feedId = message.id;
        figures.sharing.feedId = message.id;
        mine.createOffer({
          // dontStop: janus.js stops a handle's tracks when it is detached, and a share again
          // publishes the same track on the next handle
          tracks: [{ type: 'video', capture: track, simulcast: true, recv: false, dontStop: true }],
          success: (offer) => mine.send({ message: request({ request: 'configure', audio: false, video: true }), jsep: offer }),
          error: failed,
        });
      },
      // announced once Janus has its media (a subscription before then would offer none); an
      // earlier handle's hangup (after a share again) says nothing of this one
      webrtcState: (up) => {
        if (screen !== share || share.handle !== mine) return;
        figures.publishing.screen = up;
        if (up && share.feedId !== undefined) announceScreen(true, share.feedId);
      },
    });
  }

  // Takes our screen's publisher handle out of the room (unpublish, then detach).
  function unpublishScreen(share) {
    const handle = share.handle;
    share.handle = null;
    if (!handle) return;
    const detach = () => handle.detach();
    handle.send({ message: request({ request: 'unpublish' }), success: detach, error: detach });
  }

  // The ladder's share again: share off, the same track published anew on a new handle (a new
  // feed, encoder and connection, no picker), announced under the new feed once Janus takes it.
  function shareAgain() {
    const share = screen;
    if (!share) return;
    figures.sharing.sharesAgain += 1;
    announceScreen(false);
    figures.publishing.screen = false;
    delete share.feedId;
    figures.sharing.feedId = null;
    figures.sharing.framesSent = 0;
    figures.sharing.keyframesSent = 0;
    unpublishScreen(share);
    publishScreen(share);
  }

  function stopShare() {
    const share = screen;
    if (!share) return;
    screen = null;
    figures.publishing.screen = false;
    figures.sharing.feedId = null;
    if (share.feedId !== undefined) announceScreen(false);
    unpublishScreen(share);
    for (const track of share.stream.getTracks()) track.stop();
    share.tile.figure.remove();
    $('share').textContent = 'Share screen';
    climbLadder(Date.now());  // the ladder's notices go with the screen
  }

  function leave() {
    leaving = true;
    stopShare();
    roomSend({ type: 'leave' });
    if (socket) socket.close(1000, 'left');
    for (const id of [...feeds.keys()]) unsubscribe(id);
    if (janus) janus.destroy();
    if (localStream) for (const track of localStream.getTracks()) track.stop();
    figures.publishing = { video: false, audio: false, screen: false };
    figures.state = 'left';
    setStatus('Left the room');
    $('leave').hidden = true;
    $('share').hidden = true;
  }

  // MARK: fault injection (drills and tests), off unless asked for

  // A wedged decoder (decoderfaults.js): every encoded frame of a screen's receiver is dropped
  // before the decoder, so its decoded count stops, until that screen is subscribed afresh (a new
  // receiver).
  const faults = new DecoderFaults(params);
  const armReceiver = (receiver) => faults.arm(receiver);
  const setDropping = (receiver, drop) => faults.setDropping(receiver, drop);
  function updateFaults() {
    figures.faults = [...feeds.values()].filter((feed) => feed.wedged).map((feed) => `decoder-wedge ${feed.display}`);
  }

  // kind: 'decoder-wedge' | 'clear'; name: whose screen (every screen if omitted). What was done, in words.
  window.sharectlFault = (kind, name) => {
    if (kind === 'clear') {
      for (const feed of feeds.values()) {
        if (feed.wedged && feed.receiver) setDropping(feed.receiver, false);
        feed.wedged = false;
      }
      updateFaults();
      return 'Fault: cleared';
    }
    if (kind !== 'decoder-wedge') return `unknown fault '${kind}' (decoder-wedge, clear)`;
    const refused = faults.refusal();
    if (refused) return refused;
    const chosen = [...feeds.values()].filter((feed) => feed.screen && (!name || feed.display.toLowerCase() === String(name).toLowerCase()));
    if (chosen.length === 0) return name ? `no screen of ${name} is watched here` : 'no screen is watched here';
    for (const feed of chosen) {
      feed.wedged = true;
      if (feed.receiver) setDropping(feed.receiver, true);
    }
    updateFaults();
    return `Fault: the decoder of ${name ? `${name}'s screen` : 'every screen'} swallows every frame`;
  };

  // ?fault=decoder-wedge@20: that fault, on every screen, 20 s after joining the room's socket.
  function scheduleFaultFromURL() {
    faults.scheduleFromURL((kind) => notice(window.sharectlFault(kind)));
  }

  // MARK: for tests driving the page over the DevTools protocol

  window.janusRoomFigures = () => JSON.parse(JSON.stringify(figures));
  // Closes the room's socket as a lost connection would: the page joins again with its resume key.
  window.janusRoomDropSocket = () => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.close(3000, 'dropped by a test');
    return true;
  };
  window.janusRoomSubstream = (feedId, n) => {
    const feed = feeds.get(feedId) || feeds.get(Number(feedId));
    if (!feed) return Promise.resolve({ ok: false, error: `no feed ${feedId} in the room` });
    return feed.askSubstream(Number(n));
  };

  $('room-title').textContent = `Room ${roomName}`;
  $('join-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $('name').value.trim();
    if (name) join(name);
  });
  $('share').addEventListener('click', () => (screen ? stopShare() : startShare()));
  $('leave').addEventListener('click', leave);
  const presetName = (params.get('name') || '').trim();
  if (presetName) join(presetName.slice(0, 64));
})();
