// The browser client of `sharectl serve` (docs/room-protocol.md). Plain JavaScript, nothing
// loaded from elsewhere. One RTCPeerConnection per other participant: the newcomer offers, either
// side may renegotiate, and on glare the participant with the larger id number rolls back.
// A screen is an extra video m-line; it takes the stage, captioned "NAME's screen".
// As a sharer it climbs the receiver-driven ladder (ladder.js, the same rules as sharectl's) when
// a viewer reports our screen stalled: their PLIs, a rebuild for them alone, a share again to
// everyone from the same track, the give-up notice.
// Tests read window.sharectlState (participants, decoded frames, sizes, audio, events, faults,
// watchdog); each change of the watchdog's status is also logged to the console as
// "sharectl-watchdog {JSON}" (the scenario runner reads Chromium's log).
// Who hears whom (audiopaths.js, sharectl's rules and words): "hearing" is the audio path, the
// notices "No sound from NAME", "NAME is connecting and can't hear you yet", "NAME isn't getting any
// sound from you" and "Reconnecting to NAME…" go to the notice list, and the Mute button sends
// silence on the same track (the report says muted). A tile lights while its person speaks.
// Fault injection for drills and tests, off unless asked for: window.sharectlFault(kind, name?)
// or ?fault=KIND@SECONDS (see "fault injection" below).
'use strict';

(() => {
  const params = new URLSearchParams(location.search);
  const roomName = decodeURIComponent(location.pathname.split('/').filter(Boolean)[1] || '');
  const token = params.get('t') || '';
  const wsURL = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/${encodeURIComponent(roomName)}?t=${encodeURIComponent(token)}`;

  const $ = (id) => document.getElementById(id);
  const state = window.sharectlState = {
    room: roomName, id: null, name: null, connected: false, joined: false,
    welcomes: 0, resumes: 0, freshJoins: 0, reconnects: 0, sharesSent: 0, sharesReceived: 0, connectionsRenewed: 0,
    screenRebuilds: 0, sharesAgain: 0, watchdog: null,
    reconnecting: false, muted: false, speaking: false, audioNotices: [],
    local: { audio: false, video: false, screen: false, error: null },
    participants: {}, errors: [], events: [], faults: [],
  };
  const peers = new Map();         // id -> Peer
  let socket = null;
  let resumeKey = null;
  let signallingDownSince = null;  // Date.now() when the socket closed; null while it is up
  let outbox = [];                 // signalling sent while the socket is down, in order
  let localStream = null;
  let screenStream = null;
  let shareAnnounced = false;
  let leaving = false;
  let retryMs = 250;
  let holdUntil = 0;               // no reconnect before this (the cut test hook)

  function note(kind, detail = {}) {
    state.events.push({ t: Date.now(), kind, ...detail });
    if (state.events.length > 1000) state.events.shift();
  }
  const keptNotices = new Map();   // key -> li: a notice that is taken away again (the ladder's)
  function notice(text, key = null) {
    if (key !== null) takeNotice(key);
    const li = document.createElement('li');
    li.textContent = text;
    $('notices').prepend(li);
    if (key !== null) keptNotices.set(key, li);
    while ($('notices').children.length > 5) $('notices').lastChild.remove();
  }
  function takeNotice(key) {
    const li = keptNotices.get(key);
    if (li) li.remove();
    keptNotices.delete(key);
  }
  function setStatus(text) { $('status').textContent = text; }
  const number = (id) => parseInt(String(id).replace(/^p/, ''), 10) || 0;

  // MARK: signalling socket

  function send(message, { queue = true } = {}) {
    if (socket && socket.readyState === WebSocket.OPEN && state.joined) {
      socket.send(JSON.stringify(message));
    } else if (queue) {
      outbox.push(message);
    }
  }

  function connect() {
    const ws = new WebSocket(wsURL);
    socket = ws;
    ws.onopen = () => {
      retryMs = 250;
      state.connected = true;
      const join = { type: 'join', name: state.name };
      if (resumeKey) join.resume = resumeKey;
      ws.send(JSON.stringify(join));
      note('socket-open');
    };
    ws.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      receive(message);
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      state.connected = false;
      state.joined = false;
      note('socket-closed', { code: event.code });
      if (leaving || event.code === 4000) { setStatus(leaving ? 'Left' : 'Joined elsewhere'); return; }
      // Said by sharectl's rule (ReconnectWatch): only once signalling has been down 4 s, or a
      // connection has failed for 3 s; a cut bridged at once says nothing.
      if (signallingDownSince === null) signallingDownSince = Date.now();
      state.reconnects += 1;
      setTimeout(connect, Math.max(retryMs, holdUntil - Date.now()));
      retryMs = Math.min(retryMs * 2, 2000);
    };
  }

  function receive(message) {
    switch (message.type) {
      case 'welcome': return welcome(message);
      case 'joined': return addPeer(message.peer, { offer: false });
      case 'left': return removePeer(message.id, 'left');
      case 'signal': {
        let peer = peers.get(message.from);
        if (peer && message.kind === 'offer' && peer.pc.remoteDescription) {
          // An offer with another DTLS fingerprint comes from a new connection (theirs failed).
          const theirs = fingerprint(peer.pc.remoteDescription.sdp), offered = fingerprint(message.sdp || '');
          if (theirs && offered && theirs !== offered) peer = renewPeer(peer, 'they connected again', false);
        }
        if (peer) peer.enqueue(() => peer.signal(message));
        return;
      }
      case 'share': {
        const peer = peers.get(message.from);
        state.sharesReceived += 1;
        note('share', { from: message.from, on: message.on, mid: message.mid });
        if (peer) peer.enqueue(async () => peer.setSharing(!!message.on, message.mid));
        return;
      }
      case 'media': {
        const peer = peers.get(message.from);
        if (peer) peer.theirReport = message;
        reportAboutMe(message);
        return;
      }
      case 'error':
        state.errors.push(message);
        note('error', { code: message.code, message: message.message });
        return;
    }
  }

  function welcome(message) {
    state.welcomes += 1;
    const resumed = state.id !== null && message.id === state.id;
    if (state.id !== null && !resumed) {
      // The place was lost (grace over, or a server without our room): start again as a newcomer.
      for (const id of [...peers.keys()]) removePeer(id, 'place lost');
      outbox = [];
      shareAnnounced = false;
    }
    state.id = message.id;
    resumeKey = message.resume;
    state.joined = true;
    signallingDownSince = null;
    judgeReconnecting();
    setStatus(`In room ${roomName} as ${state.name} (${state.id})`);
    if (resumed) {
      state.resumes += 1;
      note('resumed', { id: state.id });
      const listed = new Set(message.peers.map((p) => p.id));
      for (const id of [...peers.keys()]) if (!listed.has(id)) removePeer(id, 'left while away');
      for (const info of message.peers) {
        const peer = peers.get(info.id);
        if (peer) peer.enqueue(async () => peer.setSharing(!!info.sharing, info.mid));
        else addPeer(info, { offer: true });
      }
    } else {
      state.freshJoins += 1;
      note('joined', { id: state.id, peers: message.peers.map((p) => p.id) });
      if (state.freshJoins === 1) scheduleFaultFromURL();
      for (const info of message.peers) addPeer(info, { offer: true });
      if (screenStream && !shareAnnounced) announceShare(null);
    }
    const pending = outbox;
    outbox = [];
    for (const m of pending) send(m);
  }

  // MARK: peers

  function addPeer(info, { offer }) {
    if (!info || peers.has(info.id) || info.id === state.id) return;
    const peer = new Peer(info, offer);
    peers.set(info.id, peer);
    audioPaths.joined(info.id, Date.now());
    note('peer-added', { id: info.id, offer });
  }

  function removePeer(id, why) {
    const peer = peers.get(id);
    if (!peer) return;
    peers.delete(id);
    peer.close();
    audioPaths.left(id);
    delete state.participants[id];
    note('peer-removed', { id, why });
  }

  // A failed connection is made again from nothing, as for someone who just joined: with
  // `offer`, ours is offered at once; else an offer of theirs is about to be answered.
  function renewPeer(old, why, offer) {
    peers.delete(old.id);
    old.close();
    const peer = new Peer({ id: old.id, name: old.name, sharing: old.sharing, mid: null }, offer);
    peer.renewals = old.renewals + 1;
    peers.set(old.id, peer);
    state.connectionsRenewed += 1;
    note('peer-renewed', { id: old.id, why });
    return peer;
  }

  function fingerprint(sdp) {
    const line = sdp.split(/\r?\n/).find((l) => l.startsWith('a=fingerprint:'));
    return line ? line.slice('a=fingerprint:'.length).trim().toLowerCase() : null;
  }

  class Peer {
    constructor(info, offer) {
      this.id = info.id;
      this.name = info.name;
      this.sharing = !!info.sharing;
      this.mid = info.mid || null;
      this.polite = number(state.id) > number(this.id);  // the larger id rolls back on glare
      this.renewals = 0;                // connections made anew since one last connected
      this.makingOffer = false;
      this.ignoreOffer = false;
      this.chain = Promise.resolve();
      this.screenTx = null;           // our own screen's transceiver on this connection
      this.stall = new ScreenStall(Date.now());
      this.wedge = null;              // a decoder fault on their screen: { kind, sticky, receiver }
      this.energy = { last: null };
      this.speaking = new SharectlAudioPaths.SpeakingIndicator();
      this.report = { muted: false, hearsMe: false, noSoundFromMe: false };  // their last report about us
      this.view = { camera: null, screen: null, cameraTrack: null, screenTrack: null };
      this.info = state.participants[this.id] = {
        name: this.name, sharing: this.sharing, connectionState: 'new', offers: 0, answers: 0,
        camera: { framesDecoded: 0, width: 0, height: 0 },
        screen: { framesDecoded: 0, width: 0, height: 0, stalled: false, shown: false },
        audio: { energy: 0, level: 0, hearing: false, samples: 0, noSound: false, muted: false, speaking: false },
        hearsMe: null,
      };
      const pc = this.pc = new RTCPeerConnection({ iceServers: [] });
      pc.onicecandidate = ({ candidate }) => {
        send({ type: 'signal', to: this.id, kind: 'candidate', candidate: candidate ? candidate.candidate : '',
               mid: candidate ? candidate.sdpMid : undefined });
      };
      pc.onnegotiationneeded = () => this.enqueue(() => this.offer());
      pc.ontrack = ({ receiver }) => {
        if (receiver.track.kind === 'video') armReceiver(receiver);  // only when the page is armed for faults
        this.render();
      };
      pc.onconnectionstatechange = () => {
        this.info.connectionState = pc.connectionState;
        this.failedSince = pc.connectionState === 'failed' ? (this.failedSince || Date.now()) : null;
        note('connection', { id: this.id, state: pc.connectionState });
        if (pc.connectionState === 'connected') this.renewals = 0;
        if (pc.connectionState !== 'failed') return;
        // Renewed by the side that keeps its offer in glare after 2 s, by the other after 15 s
        // if nothing new came, each attempt since the last connection twice as late (at most
        // 60 s); only while the signalling is up.
        const renewLater = () => {
          if (peers.get(this.id) !== this || this.pc.connectionState !== 'failed') return;
          if (!state.joined) { setTimeout(renewLater, 1000); return; }
          renewPeer(this, 'the connection failed', true);
        };
        setTimeout(renewLater, Math.min(60000, (this.polite ? 15000 : 2000) * 2 ** Math.min(this.renewals, 5)));
      };
      this.tile = figure(`${this.name}`);
      $('tiles').append(this.tile.figure);
      this.audio = document.createElement('audio');
      this.audio.autoplay = true;
      this.tile.figure.append(this.audio);
      if (offer) {
        // The newcomer offers: audio and camera, both sendrecv (recvonly without local media).
        for (const kind of ['audio', 'video']) {
          const track = localStream && localStream.getTracks().find((t) => t.kind === kind);
          if (track) pc.addTransceiver(track, { direction: 'sendrecv', streams: [localStream] });
          else pc.addTransceiver(kind, { direction: 'recvonly' });
        }
      }
      this.negotiated = false;         // the first offer/answer (audio and camera) is done
    }

    // After the first negotiation: a screen we are sharing goes to this participant too.
    firstNegotiationDone() {
      if (this.negotiated) return;
      this.negotiated = true;
      note('negotiated', { id: this.id });
      if (screenStream) this.enqueue(() => this.addScreen());
    }

    enqueue(work) {
      this.chain = this.chain.then(work).catch((error) => note('peer-error', { id: this.id, error: String(error) }));
      return this.chain;
    }

    async offer() {
      if (this.pc.signalingState === 'closed') return;
      try {
        this.makingOffer = true;
        await this.pc.setLocalDescription();
        this.info.offers += 1;
        send({ type: 'signal', to: this.id, kind: 'offer', sdp: this.pc.localDescription.sdp });
      } finally {
        this.makingOffer = false;
      }
      if (this.screenTx && screenStream && !shareAnnounced) announceShare(this.screenTx.mid);
    }

    async signal(message) {
      const pc = this.pc;
      if (pc.signalingState === 'closed') return;
      if (message.kind === 'offer' || message.kind === 'answer') {
        const collision = message.kind === 'offer' && (this.makingOffer || pc.signalingState !== 'stable');
        this.ignoreOffer = !this.polite && collision;
        if (this.ignoreOffer) { note('glare-kept-own-offer', { id: this.id }); return; }
        if (message.kind === 'answer' && pc.signalingState !== 'have-local-offer') {
          note('stray-answer', { id: this.id });
          return;
        }
        await pc.setRemoteDescription({ type: message.kind, sdp: message.sdp });
        if (message.kind === 'offer') {
          this.attachLocal();
          await pc.setLocalDescription();
          this.info.answers += 1;
          send({ type: 'signal', to: this.id, kind: 'answer', sdp: pc.localDescription.sdp });
        }
        this.render();
        if (pc.signalingState === 'stable') this.firstNegotiationDone();
      } else if (message.kind === 'candidate') {
        try {
          if (message.candidate) {
            await pc.addIceCandidate({ candidate: message.candidate, sdpMid: message.mid ?? null,
                                       sdpMLineIndex: message.mid == null ? 0 : null });
          } else {
            await pc.addIceCandidate({ candidate: '', sdpMid: message.mid ?? null, sdpMLineIndex: message.mid == null ? 0 : null });
          }
        } catch (error) {
          if (!this.ignoreOffer) note('candidate-refused', { id: this.id, error: String(error) });
        }
      }
    }

    // The answerer's own audio and camera go on the first audio and video m-lines of the offer.
    // Ours that are on no m-line are from an offer of ours that lost glare and was rolled back:
    // an offer never takes over a transceiver made by addTransceiver, so they are stopped (else
    // the camera stays on them and never reaches the m-line the other side receives on).
    attachLocal() {
      for (const kind of ['audio', 'video']) {
        const ofKind = this.pc.getTransceivers().filter((t) => t.receiver.track.kind === kind && t !== this.screenTx);
        const transceiver = ofKind.find((t) => t.mid !== null);
        for (const orphan of ofKind.filter((t) => t.mid === null && t.direction !== 'stopped')) {
          orphan.stop();
          note('glare-orphan-stopped', { id: this.id, media: kind });
        }
        if (!localStream) continue;
        const track = localStream.getTracks().find((t) => t.kind === kind);
        if (!transceiver || !track || transceiver.sender.track) continue;
        transceiver.direction = 'sendrecv';
        transceiver.sender.replaceTrack(track);
        transceiver.sender.setStreams(localStream);
      }
    }

    async addScreen() {
      if (!screenStream || !this.negotiated || this.pc.signalingState === 'closed') return;
      const track = screenStream.getVideoTracks()[0];
      if (this.screenTx) {
        this.screenTx.direction = 'sendonly';
        await this.screenTx.sender.replaceTrack(track);
      } else {
        this.screenTx = this.pc.addTransceiver(track, { direction: 'sendonly', streams: [screenStream] });
      }
    }

    // The ladder's rebuild (and each connection's part of a share again): our screen on a new
    // section of this connection, the old one inactive, so a new encoder here and a new decoder
    // there, from the same track.
    async rebuildScreen() {
      if (!screenStream || !this.negotiated || this.pc.signalingState === 'closed') return;
      const track = screenStream.getVideoTracks()[0];
      const old = this.screenTx;
      if (old) {
        old.direction = 'inactive';
        await old.sender.replaceTrack(null);
      }
      this.screenTx = this.pc.addTransceiver(track, { direction: 'sendonly', streams: [screenStream] });
      this.screenSent = null;
      state.screenRebuilds += 1;
      note('screen-rebuilt', { id: this.id, was: old ? old.mid : null });
    }

    async removeScreen() {
      if (!this.screenTx || this.pc.signalingState === 'closed') return;
      this.screenTx.direction = 'inactive';
      await this.screenTx.sender.replaceTrack(null);
    }

    async setSharing(on, mid) {
      this.sharing = on;
      this.mid = on ? (mid || null) : null;
      this.info.sharing = on;
      if (!on) {
        // Their screen is gone: a wedged decoder (sticky or not) goes with it.
        if (this.wedge) note('fault-ended', { id: this.id, fault: this.wedge.kind, why: 'share ended' });
        this.wedge = null;
        updateFaults();
        this.stall = new ScreenStall(Date.now());
        this.info.screen = { framesDecoded: 0, width: 0, height: 0, stalled: false, shown: false };
      } else {
        this.stall = new ScreenStall(Date.now());
      }
      this.render();
    }

    videoTransceivers() {
      return this.pc.getTransceivers().filter((t) => t.receiver.track.kind === 'video' && t.mid !== null);
    }

    cameraTransceiver() { return this.videoTransceivers()[0] || null; }

    // The peer's screen: a video m-line after the camera on which it sends to us.
    screenTransceiver() {
      if (!this.sharing) return null;
      const candidates = this.videoTransceivers().slice(1).filter((t) => t !== this.screenTx
        && (t.currentDirection === 'recvonly' || t.currentDirection === 'sendrecv'));
      return candidates.find((t) => t.mid === this.mid) || candidates[candidates.length - 1] || null;
    }

    render() {
      const camera = this.cameraTransceiver();
      if (camera && this.view.cameraTrack !== camera.receiver.track) {
        this.view.cameraTrack = camera.receiver.track;
        this.tile.video.srcObject = new MediaStream([camera.receiver.track]);
      }
      const audio = this.pc.getTransceivers().find((t) => t.receiver.track.kind === 'audio');
      if (audio && (!this.audio.srcObject || this.audio.srcObject.getTracks()[0] !== audio.receiver.track)) {
        this.audio.srcObject = new MediaStream([audio.receiver.track]);
      }
      const screen = this.screenTransceiver();
      if (screen) {
        if (this.view.screenTrack !== screen.receiver.track) {
          if (this.view.screen) this.view.screen.figure.remove();
          this.view.screen = figure(`${this.name}'s screen`);
          this.view.screen.figure.dataset.peer = this.id;
          this.view.screen.video.srcObject = new MediaStream([screen.receiver.track]);
          this.view.screenTrack = screen.receiver.track;
          $('stage').append(this.view.screen.figure);
          note('screen-shown', { id: this.id, mid: screen.mid });
        }
      } else if (this.view.screen) {
        // Shared no more: the view goes at once rather than freeze on the last frame.
        this.view.screen.video.srcObject = null;
        this.view.screen.figure.remove();
        this.view.screen = null;
        this.view.screenTrack = null;
        note('screen-removed', { id: this.id });
      }
      this.info.screen.shown = !!this.view.screen;
    }

    // Keeps a decoder fault on the screen it is about: the first screen receiver gets the
    // dropping transform; a rebuilt screen (another transceiver) ends a plain wedge and takes a
    // sticky one along.
    applyWedge() {
      if (!this.wedge) return;
      const screen = this.screenTransceiver();
      if (!screen || this.wedge.receiver === screen.receiver) return;
      if (this.wedge.receiver && !this.wedge.sticky) {
        note('fault-ended', { id: this.id, fault: this.wedge.kind, why: 'screen rebuilt', mid: screen.mid });
        this.wedge = null;
        updateFaults();
        return;
      }
      if (this.wedge.receiver) setDropping(this.wedge.receiver, false);
      const dropping = setDropping(screen.receiver, true);
      this.wedge.receiver = screen.receiver;
      note(dropping ? 'fault-applied' : 'fault-not-armed', { id: this.id, fault: this.wedge.kind, mid: screen.mid });
    }

    async measure(now) {
      if (this.pc.signalingState === 'closed') return null;
      this.render();
      this.applyWedge();
      const stats = await this.pc.getStats();
      const byMid = new Map();
      let audio = null;
      const ours = this.screenTx && this.screenTx.mid;
      const camera = this.cameraTransceiver();
      let cameraOut = null;
      stats.forEach((report) => {
        if (report.type === 'outbound-rtp' && ours != null && String(report.mid) === String(ours)) {
          // What left for them of our screen: the ladder's counters (they start again on a new section).
          this.screenSent = { mid: String(ours), frames: report.framesSent || 0, keyframes: report.keyFramesEncoded || 0 };
        }
        if (report.type === 'outbound-rtp' && camera && String(report.mid) === String(camera.mid)) cameraOut = report;
        if (report.type !== 'inbound-rtp') return;
        if (report.kind === 'audio') audio = report;
        else if (report.mid != null) byMid.set(String(report.mid), report);
      });
      const cameraStats = camera && byMid.get(String(camera.mid));
      // What left for them of our camera, and how the section stands (for whoever diagnoses a dark tile).
      this.info.cameraSent = camera ? {
        mid: camera.mid, direction: camera.currentDirection, track: !!camera.sender.track,
        frames: cameraOut ? cameraOut.framesSent || 0 : 0, keyframes: cameraOut ? cameraOut.keyFramesEncoded || 0 : 0,
        pli: cameraOut ? cameraOut.pliCount || 0 : 0, nack: cameraOut ? cameraOut.nackCount || 0 : 0,
      } : null;
      this.info.camera = {
        framesDecoded: cameraStats ? cameraStats.framesDecoded || 0 : 0,
        width: cameraStats ? cameraStats.frameWidth || 0 : 0,
        height: cameraStats ? cameraStats.frameHeight || 0 : 0,
      };
      const result = { camera: { from: this.id, framesDecoded: this.info.camera.framesDecoded }, screen: null, hearing: false };
      const screen = this.screenTransceiver();
      if (this.sharing) {
        const s = screen && byMid.get(String(screen.mid));
        const frames = s ? s.framesDecoded || 0 : 0;
        const stalled = this.stall.observe(frames, now);  // screenstall.js
        this.info.screen = { framesDecoded: frames, width: s ? s.frameWidth || 0 : 0, height: s ? s.frameHeight || 0 : 0,
                             stalled, shown: !!this.view.screen };
        result.screen = { from: this.id, framesDecoded: frames, screenStalled: stalled };
      }
      // Who hears whom: decoded samples (concealment left out) and the level of what arrives.
      const energy = audio ? audio.totalAudioEnergy || 0 : 0;
      const samples = audio ? Math.max(0, (audio.totalSamplesReceived || 0) - (audio.concealedSamples || 0)) : 0;
      const level = audio ? audio.audioLevel || 0 : 0;
      const theirAudio = this.pc.getTransceivers().find((t) => t.receiver.track && t.receiver.track.kind === 'audio');
      const ourAudio = localStream && localStream.getAudioTracks().length > 0;
      const verdict = audioPaths.observe(this.id, {
        connected: this.pc.connectionState === 'connected',
        theySendAudio: !!theirAudio && ['sendrecv', 'recvonly'].includes(theirAudio.currentDirection),
        samplesDecoded: samples, levelDbfs: SharectlAudioPaths.dbfs(level),
        theyAreMuted: this.report.muted, theyHearUs: this.report.hearsMe, theyHearNoSoundFromUs: this.report.noSoundFromMe,
        weSendAudio: !!ourAudio, weAreMuted: state.muted,
      }, now);
      this.energy.last = energy;
      this.info.audio = { energy, level, samples, hearing: verdict.hearing, noSound: verdict.noSound,
                          muted: this.report.muted, speaking: this.speaking.isSpeaking };
      result.hearing = verdict.hearing;
      result.noSound = verdict.noSound;
      result.notices = SharectlAudioPaths.notices(verdict, this.name);
      return result;
    }

    close() {
      try { this.pc.close(); } catch { /* already closed */ }
      this.tile.figure.remove();
      if (this.view.screen) this.view.screen.figure.remove();
    }
  }

  function figure(caption) {
    const element = document.createElement('figure');
    const video = document.createElement('video');
    video.autoplay = true;
    video.playsInline = true;
    video.muted = true;
    const text = document.createElement('figcaption');
    text.textContent = caption;
    element.append(video, text);
    return { figure: element, video, caption: text };
  }

  // What others say about us: do they decode our camera, our screen, hear us?
  function reportAboutMe(message) {
    const peer = peers.get(message.from);
    if (!peer || !state.id) return;
    const screen = (message.screens || []).find((s) => s.from === state.id);
    const camera = (message.cameras || []).find((c) => c.from === state.id);
    peer.info.hearsMe = (message.hearing || []).includes(state.id);
    peer.report = { muted: message.muted === true, hearsMe: peer.info.hearsMe,
                    noSoundFromMe: (message.noSoundFrom || []).includes(state.id) };
    peer.info.theirViewOfMe = { camera: camera ? camera.framesDecoded : null, screen: screen ? screen.framesDecoded : null,
                                screenStalled: screen ? !!screen.screenStalled : null };
  }

  // MARK: media reports, once a second

  // "Reconnecting…" by sharectl's rule: signalling down 4 s, or a connection failed for 3 s.
  function judgeReconnecting() {
    const now = Date.now();
    const down = signallingDownSince !== null && now - signallingDownSince >= 4000;
    const failed = [...peers.values()].some((p) => p.failedSince && now - p.failedSince >= 3000);
    const reconnecting = down || failed;
    if (reconnecting === state.reconnecting) return;
    state.reconnecting = reconnecting;
    note('reconnecting', { on: reconnecting });
    if (reconnecting) setStatus('Reconnecting…');
    else if (state.joined) setStatus(`In room ${roomName} as ${state.name} (${state.id})`);
  }

  async function reportMedia() {
    if (state.id === null) return;  // measured while signalling is down too; sent only when it is up
    const now = Date.now();
    const screens = [], cameras = [], hearing = [], noSoundFrom = [], audioNotices = [];
    for (const peer of [...peers.values()]) {
      try {
        const result = await peer.measure(now);
        if (!result) continue;
        cameras.push(result.camera);
        if (result.screen) screens.push(result.screen);
        if (result.hearing) hearing.push(peer.id);
        if (result.noSound) noSoundFrom.push(peer.id);
        audioNotices.push(...result.notices);
      } catch (error) {
        note('stats-error', { id: peer.id, error: String(error) });
      }
    }
    showAudioNotices(audioNotices);
    state.lastReport = { t: now, screens, cameras, hearing, noSoundFrom, muted: state.muted };
    send({ type: 'media', screens, hearing, cameras, muted: state.muted, noSoundFrom }, { queue: false });
    climbLadder(now);
  }

  // MARK: who hears whom, mute, speaking

  const audioPaths = new SharectlAudioPaths.AudioPathRules();

  // Each notice shows while it holds, and is taken away when it no longer does.
  function showAudioNotices(texts) {
    const now = new Set(texts);
    for (const text of state.audioNotices) if (!now.has(text)) takeNotice(`audio:${text}`);
    for (const text of texts) if (!state.audioNotices.includes(text)) notice(text, `audio:${text}`);
    if (texts.join('\n') !== state.audioNotices.join('\n')) note('audio-notices', { notices: texts });
    state.audioNotices = texts;
  }

  // Mute: the microphone's track is disabled, so it sends silence on the same stream.
  function setMuted(muted) {
    state.muted = muted;
    if (localStream) for (const track of localStream.getAudioTracks()) track.enabled = !muted;
    $('mute').textContent = muted ? 'Unmute' : 'Mute';
    $('mute').setAttribute('aria-pressed', String(muted));
    note('muted', { muted });
  }

  // The speaking light at the meter's 10 Hz: the level of what each person's receiver decodes
  // (inbound-rtp audioLevel; the synchronization sources' level needs a header extension that not
  // every sender writes).
  let metering = false;
  let selfMeter = null;    // { analyser, samples, tile, speaking }: our own microphone, as it is captured
  function meterSelf(now) {
    if (!selfMeter) return;
    selfMeter.analyser.getFloatTimeDomainData(selfMeter.samples);
    let peak = 0;
    for (const sample of selfMeter.samples) peak = Math.max(peak, Math.abs(sample));
    const speaking = selfMeter.speaking.level(state.muted ? -120 : SharectlAudioPaths.dbfs(peak), now);
    selfMeter.tile.classList.toggle('speaking', speaking);
    if (speaking !== state.speaking) note('speaking-self', { on: speaking });
    state.speaking = speaking;
  }
  async function meterSpeaking() {
    if (metering) return;  // a slow round is not stacked on
    metering = true;
    try {
      meterSelf(Date.now());
      for (const peer of [...peers.values()]) {
        const receiver = peer.pc.getReceivers().find((r) => r.track && r.track.kind === 'audio');
        let level = 0;
        if (receiver && peer.pc.signalingState !== 'closed') {
          (await receiver.getStats()).forEach((report) => {
            if (report.type === 'inbound-rtp' && report.kind === 'audio') level = report.audioLevel || 0;
          });
        }
        const speaking = peer.speaking.level(SharectlAudioPaths.dbfs(level), Date.now());
        peer.tile.figure.classList.toggle('speaking', speaking);
        peer.info.audio.speaking = speaking;
      }
    } catch (error) {
      note('stats-error', { error: String(error) });
    } finally {
      metering = false;
    }
  }

  // MARK: the receiver-driven ladder, as a sharer

  const ladder = new SharectlLadder.ReceiverLadder();
  const ladderStatus = new SharectlLadder.LadderStatus();
  let sharingSince = null;
  let lastLogged = null;

  function climbLadder(now) {
    const observed = {};
    if (screenStream) {
      for (const peer of peers.values()) {
        if (!peer.screenTx || !peer.negotiated) continue;
        const view = peer.info.theirViewOfMe || {};
        const sent = peer.screenSent && peer.screenSent.mid === String(peer.screenTx.mid) ? peer.screenSent : null;
        observed[peer.id] = { name: peer.name, stalled: view.screenStalled === true,
                              framesSent: sent ? sent.frames : 0, keyframesSent: sent ? sent.keyframes : 0,
                              framesDecoded: view.screen === undefined ? null : view.screen };
      }
    }
    const steps = ladder.tick(now, observed);
    for (const taken of steps) carryOut(taken);
    const t = sharingSince === null ? 0 : Math.round((now - sharingSince) / 100) / 10;
    state.watchdog = ladderStatus.publish(ladder, steps, t);
    const line = JSON.stringify(state.watchdog);
    if (screenStream && line !== lastLogged) {
      lastLogged = line;
      console.log(`sharectl-watchdog ${line}`);
    }
  }

  function carryOut(taken) {
    const { action } = taken;
    note('watchdog', { action: action.name, subject: action.subject, reason: taken.reason });
    switch (action.name) {
      case 'notice':
        if (action.text === null) takeNotice(`ladder:${action.subject}`);
        else notice(action.text, `ladder:${action.subject}`);
        return;
      case 'rebuild': {
        const peer = peers.get(action.subject);
        if (peer) peer.enqueue(() => peer.rebuildScreen());
        return;
      }
      case 'shareAgain':
        shareAgain();
        return;
      default:
        // keyframe: the viewer's own PLIs ask the encoder for them (a page cannot); held,
        // recovered and giveUp change nothing here (the notice says it).
    }
  }

  // MARK: sharing our own screen

  function announceShare(mid) {
    shareAnnounced = true;
    state.sharesSent += 1;
    const message = { type: 'share', on: true };
    if (mid) message.mid = mid;
    send(message);
    note('share-sent', { mid });
  }

  async function startShare() {
    if (screenStream) return;
    try {
      screenStream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
    } catch (error) {
      notice(`Could not share the screen: ${error.message || error}`);
      note('share-failed', { error: String(error) });
      return;
    }
    state.local.screen = true;
    shareAnnounced = false;
    sharingSince = Date.now();
    const track = screenStream.getVideoTracks()[0];
    track.onended = () => stopShare();
    const self = figure(`${state.name}'s screen`);
    self.figure.classList.add('self');
    self.figure.dataset.peer = 'self';
    self.video.srcObject = screenStream;
    $('stage').append(self.figure);
    $('share').textContent = 'Stop sharing';
    if (peers.size === 0) announceShare(null);
    for (const peer of peers.values()) peer.enqueue(() => peer.addScreen());
  }

  // Share again to everyone from the same track, no picker: share off, every connection's screen
  // on a new section, share on with the first new section's mid (at its offer).
  function shareAgain() {
    if (!screenStream) return;
    state.sharesAgain += 1;
    send({ type: 'share', on: false });
    shareAnnounced = false;
    note('share-again', {});
    if (peers.size === 0) announceShare(null);
    for (const peer of peers.values()) peer.enqueue(() => peer.rebuildScreen());
  }

  async function stopShare() {
    if (!screenStream) return;
    const stream = screenStream;
    screenStream = null;
    state.local.screen = false;
    for (const peer of peers.values()) peer.enqueue(() => peer.removeScreen());
    send({ type: 'share', on: false });
    for (const track of stream.getTracks()) track.stop();
    const self = document.querySelector('#stage figure[data-peer="self"]');
    if (self) self.remove();
    $('share').textContent = 'Share screen';
    note('share-stopped');
  }

  // MARK: joining

  async function join(name) {
    state.name = name;
    $('join-form').hidden = true;
    setStatus('Starting camera and microphone…');
    try {
      localStream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
      state.local.audio = localStream.getAudioTracks().length > 0;
      state.local.video = localStream.getVideoTracks().length > 0;
      const self = figure(name);
      self.figure.classList.add('self');
      self.video.srcObject = localStream;
      $('tiles').prepend(self.figure);
      if (state.local.audio) {
        // Our own speaking light: the microphone as captured (silent while muted).
        const context = new AudioContext();
        const analyser = context.createAnalyser();
        analyser.fftSize = 2048;
        context.createMediaStreamSource(localStream).connect(analyser);
        selfMeter = { analyser, samples: new Float32Array(analyser.fftSize), tile: self.figure,
                      speaking: new SharectlAudioPaths.SpeakingIndicator() };
      }
    } catch (error) {
      state.local.error = String(error);
      notice(`No camera or microphone (${error.message || error}); joining to watch and listen only`);
    }
    setStatus('Joining…');
    connect();
    setInterval(reportMedia, 1000);
    setInterval(judgeReconnecting, 250);
    setInterval(meterSpeaking, 100);
    $('leave').hidden = false;
    $('mute').hidden = !state.local.audio;
    if (navigator.mediaDevices && navigator.mediaDevices.getDisplayMedia) $('share').hidden = false;
    if (params.get('share') === '1') startShare();
  }

  function leave() {
    leaving = true;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'leave' }));
    for (const id of [...peers.keys()]) removePeer(id, 'we left');
    if (localStream) for (const track of localStream.getTracks()) track.stop();
    if (screenStream) for (const track of screenStream.getTracks()) track.stop();
    $('leave').hidden = true;
    $('share').hidden = true;
    $('mute').hidden = true;
  }

  // For tests driving the page over the DevTools protocol: drop the signalling socket as a
  // network cut would, and stay away for `ms` before resuming.
  window.sharectlDebug = {
    cutSignalling(ms) {
      holdUntil = Date.now() + ms;
      note('cut', { ms });
      if (socket) socket.close(4001, 'cut for a test');
    },
    // Stop (true) or restart (false) sending our screen's frames without renegotiating, as a
    // wedged sender would: receivers must report screenStalled after 4 s.
    async holdScreen(hold) {
      const track = screenStream && screenStream.getVideoTracks()[0];
      for (const peer of peers.values()) {
        if (peer.screenTx) await peer.screenTx.sender.replaceTrack(hold ? null : track);
      }
      note('screen-held', { hold });
    },
    // Make the connection to `name` anew from our side and offer it at once, as after it failed.
    // Asked of both sides together, the two new offers cross (glare on fresh connections).
    renew(name) {
      const peer = [...peers.values()].find((p) => p.name === name);
      if (!peer) return `no one called ${name} is in the call`;
      renewPeer(peer, 'asked by a test', true);
      return 'renewed';
    },
  };

  // MARK: fault injection (drills and tests), off unless asked for

  // A wedged decoder (decoderfaults.js): 'decoder-wedge' lasts until the sharer rebuilds the
  // screen (a new transceiver, so a new receiver here); 'decoder-wedge-sticky' follows the sharer's
  // screen across rebuilds until their share ends (a share again).
  const faults = new DecoderFaults(params, (n) => { state.framesSwallowed = (state.framesSwallowed || 0) + n; });
  const armReceiver = (receiver) => faults.arm(receiver);
  const setDropping = (receiver, drop) => faults.setDropping(receiver, drop);
  function updateFaults() {
    state.faults = [...peers.values()].filter((p) => p.wedge).map((p) => `${p.wedge.kind} ${p.name}`);
  }

  // kind: 'decoder-wedge' | 'decoder-wedge-sticky' | 'clear'; name: whose screen (every screen if omitted).
  // Returns what was done, in words.
  window.sharectlFault = (kind, name) => {
    if (kind === 'clear') {
      for (const peer of peers.values()) {
        if (peer.wedge && peer.wedge.receiver) setDropping(peer.wedge.receiver, false);
        peer.wedge = null;
      }
      updateFaults();
      note('fault-cleared', {});
      return 'Fault: cleared';
    }
    if (kind !== 'decoder-wedge' && kind !== 'decoder-wedge-sticky') {
      return `unknown fault '${kind}' (decoder-wedge, decoder-wedge-sticky, clear)`;
    }
    const refused = faults.refusal();
    if (refused) return refused;
    const chosen = [...peers.values()].filter((p) => !name || p.name.toLowerCase() === String(name).toLowerCase());
    if (chosen.length === 0) return name ? `no one called ${name} is in the call` : 'no one else is in the call';
    for (const peer of chosen) {
      peer.wedge = { kind, sticky: kind === 'decoder-wedge-sticky', receiver: null };
      peer.applyWedge();
    }
    updateFaults();
    note('fault', { fault: kind, name: name || null });
    return `Fault: the decoder of ${name ? `${name}'s screen` : 'every screen'} swallows every frame`;
  };

  // ?fault=decoder-wedge@20: that fault, on every screen, 20 s after joining (decoderfaults.js).
  function scheduleFaultFromURL() {
    faults.scheduleFromURL((kind) => note('fault-from-url', { fault: kind, said: window.sharectlFault(kind) }));
  }

  $('room-title').textContent = `Room ${roomName}`;
  $('join-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $('name').value.trim();
    if (name) join(name);
  });
  $('leave').addEventListener('click', leave);
  $('mute').addEventListener('click', () => setMuted(!state.muted));
  $('share').addEventListener('click', () => (screenStream ? stopShare() : startShare()));
  window.addEventListener('pagehide', () => { if (!leaving) leave(); });
  const presetName = (params.get('name') || '').trim();
  if (presetName) join(presetName.slice(0, 64));
})();
