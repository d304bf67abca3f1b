#!/usr/bin/env python3
"""Drives the daemon's dashboard in headless Chromium through the DevTools protocol.

    tests/daemon/api/dashboard_cdp.py URL OUTDIR

URL is the dashboard of a running `hetsched serve` on loopback (its trailing slash included);
OUTDIR receives chromium.log and dashboard-actions.png. DASHBOARD_TOKEN in the environment is an
admin token of that daemon. The daemon must hold more than 200 queued jobs of one device type
with nothing finishing during the check, and sample its figures every second (history_every:
1s); tests/cli/serve_test.cc sets this up.

What it checks, each against the API at the same time:
  power    the page's modeled power equals /v1/cluster's power.draw_w and /metrics'
           hetsched_cluster_power_watts;
  why      a queued job's row shows its wait reason, as /v1/jobs/NAME/why says it;
  paging   the queued view pages past the first 200 jobs, in the API's order, asking /v1/jobs
           for the next page with the cursor the page before gave;
  actions  a drain clicked without a token shows the API's 401; with the token pasted in, a
           drain and an undrain clicked on the page reach the daemon, and so does a cancel;
  reload   after a reload the token (sessionStorage only, never the URL), the view and the
           node's history from the daemon's database are still there;
  charts   after a reload, and in a new tab (whose sessionStorage starts empty), the power
           chart has at least the points it had before and starts where it started: the
           daemon's samples (GET /v1/history), not the tab's;
and that the page threw no uncaught error and broke no Content-Security-Policy rule.

Chromium speaks CDP over --remote-debugging-pipe: NUL-terminated JSON, commands in on its file
descriptor 3, replies and events out on 4. No dependency beyond python3 and chromium.
Exit status: 0 pass, 1 a check failed, 2 usage, 77 skip (chromium is not installed).
CHROMIUM names another binary than `chromium`.
"""

import base64
import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

OVERALL_TIMEOUT_S = 150
STEP_TIMEOUT_S = 20


class CheckFailed(Exception):
    pass


class Browser:
    """One headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, chromium, profile, log):
        cmd_read, self._cmd_write = os.pipe()
        self._out_read, out_write = os.pipe()

        def onto_fds_3_and_4():
            # Above 10 first, so that neither dup2 overwrites the other's source.
            a = fcntl.fcntl(cmd_read, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(out_write, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, '--headless=new', '--remote-debugging-pipe', '--no-sandbox',
             '--disable-gpu', '--user-data-dir=' + profile, '--no-first-run',
             '--no-default-browser-check', '--disable-extensions', '--disable-dev-shm-usage',
             '--hide-scrollbars', '--window-size=1280,1000', 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=False,
            preexec_fn=onto_fds_3_and_4, start_new_session=True)
        os.close(cmd_read)
        os.close(out_write)
        self._next_id = 0
        self._replies = {}
        self._cond = threading.Condition()
        self.events = queue.Queue()
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()
        self.session = None

    def _read(self):
        buf = b''
        while True:
            chunk = os.read(self._out_read, 65536)
            if not chunk:
                break
            buf += chunk
            while b'\0' in buf:
                raw, buf = buf.split(b'\0', 1)
                msg = json.loads(raw)
                if 'id' in msg:
                    with self._cond:
                        self._replies[msg['id']] = msg
                        self._cond.notify_all()
                else:
                    self.events.put(msg)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(self, method, params=None, session=True):
        self._next_id += 1
        msg = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session and self.session:
            msg['sessionId'] = self.session
        os.write(self._cmd_write, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + STEP_TIMEOUT_S
        with self._cond:
            while msg['id'] not in self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise CheckFailed('chromium did not answer %s within %d s' %
                                      (method, STEP_TIMEOUT_S))
                self._cond.wait(left)
            reply = self._replies.pop(msg['id'])
        if 'error' in reply:
            raise CheckFailed('%s: %s' % (method, reply['error'].get('message')))
        return reply.get('result', {})

    def open_page(self):
        target = self.send('Target.createTarget', {'url': 'about:blank'}, session=False)
        attached = self.send('Target.attachToTarget',
                             {'targetId': target['targetId'], 'flatten': True}, session=False)
        self.session = attached['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.send(domain + '.enable')

    def eval(self, expression):
        r = self.send('Runtime.evaluate',
                      {'expression': expression, 'returnByValue': True, 'awaitPromise': True})
        if 'exceptionDetails' in r:
            d = r['exceptionDetails']
            raise CheckFailed('evaluating %r threw: %s' %
                              (expression, d.get('exception', {}).get('description') or d))
        return r['result'].get('value')

    def wait_for(self, expression, what, timeout=STEP_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        # An element comes back by value as {}, which Python reads as false.
        expression = ("(function(v){return v instanceof Element ? true : v;})(%s)" % expression)
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CheckFailed('%s: not within %d s' % (what, timeout))
            time.sleep(0.2)

    def load(self, url):
        self.send('Page.navigate', {'url': url})
        self.wait_for("document.readyState === 'complete' && "
                      "!!document.getElementById('jobs-body')", 'the dashboard loads at ' + url)

    def page_errors(self):
        """Uncaught exceptions, console.error calls and CSP refusals seen so far."""
        errors = []
        while not self.events.empty():
            ev = self.events.get()
            method, params = ev.get('method'), ev.get('params', {})
            if method == 'Runtime.exceptionThrown':
                d = params.get('exceptionDetails', {})
                errors.append('uncaught: ' + (d.get('exception', {}).get('description') or
                                              d.get('text', '')))
            elif method == 'Runtime.consoleAPICalled' and params.get('type') == 'error':
                errors.append('console.error: ' + ' '.join(
                    str(a.get('value', a.get('description', ''))) for a in params.get('args', [])))
            elif method == 'Log.entryAdded':
                entry = params.get('entry', {})
                if 'Content Security Policy' in entry.get('text', ''):
                    errors.append('CSP: ' + entry['text'])
        return errors

    def close(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        os.close(self._cmd_write)


class Api:
    def __init__(self, base, token):
        self.base, self.token = base, token

    def get(self, path, raw=False):
        req = urllib.request.Request(self.base + path,
                                     headers={'Authorization': 'Bearer ' + self.token})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode()
        return body if raw else json.loads(body)


def js(value):
    return json.dumps(value)


def check_power(b, api):
    b.wait_for("document.getElementById('power-total').getAttribute('data-w')",
               'the power card shows /v1/cluster power.draw_w')
    for _ in range(10):
        page = b.eval("Number(document.getElementById('power-total').getAttribute('data-w'))")
        shown = b.eval("document.getElementById('power-total').textContent")
        cluster = api.get('v1/cluster')['power']['draw_w']
        m = re.search(r'^hetsched_cluster_power_watts (\S+)$', api.get('metrics', raw=True), re.M)
        metrics = float(m.group(1)) if m else None
        if page == cluster == metrics and shown == '{:,}'.format(round(cluster)):
            devices = sum(t['power_w'] for t in api.get('v1/cluster')['types'])
            if devices == cluster:
                raise CheckFailed('power: the draw equals the devices\' share (%s W): give the '
                                  'nodes base power, or the check cannot tell them apart' % cluster)
            return 'power: page %s W = /v1/cluster %s W = /metrics %s W (devices %s W)' % (
                shown, cluster, metrics, devices)
        time.sleep(1)
    raise CheckFailed('power: the page shows %s (%s W), /v1/cluster draw_w is %s W, /metrics %s W'
                      % (shown, page, cluster, metrics))


def check_live_pages(b, api):
    """The default view, queued and running, pages too: its jobs come from /v1/jobs unfiltered."""
    live_states = ('queued', 'starting', 'running', 'stopping')
    live = [j['name'] for j in api.get('v1/jobs?limit=100000')['jobs']
            if j['state'] in live_states]
    b.wait_for("document.getElementById('jobs-page').textContent === %s"
               % js('1–200 of %d' % len(live)), 'the first page of queued and running')
    b.wait_for("!document.getElementById('jobs-next').disabled", 'the next-page button enables')
    b.eval("document.getElementById('jobs-next').click()")
    want = live[200:]
    b.wait_for("(function(){var r=document.querySelectorAll('#jobs-body tr.job-row');"
               "return r.length === %d && r[0].getAttribute('data-job') === %s;})()"
               % (len(want), js(want[0])), 'page 2 of queued and running')
    if row_names(b) != want or not b.eval("document.getElementById('jobs-next').disabled"):
        raise CheckFailed('paging: page 2 of queued and running is not the API\'s live jobs 201 '
                          'to %d, or offers a page 3' % len(live))
    b.eval("document.getElementById('jobs-prev').click()")
    return 'paging: queued and running, %d jobs, page 2 shows %d' % (len(live), len(want))


def show_view(b, state):
    b.eval("(function(){var s=document.getElementById('jobs-state'); s.value=%s;"
           "s.dispatchEvent(new Event('change'));})()" % js(state))


def row_names(b):
    return b.eval("Array.from(document.querySelectorAll('#jobs-body tr.job-row'))"
                  ".map(function(r){return r.getAttribute('data-job');})")


def check_why(b, api):
    show_view(b, 'queued')
    first = api.get('v1/jobs?state=queued&limit=1')['jobs'][0]['name']
    sel = "document.querySelector('#jobs-body tr.job-row[data-job=%s] .why')" % js(first)
    b.wait_for("(%s||{}).textContent && !/asking/.test(%s.textContent)" % (sel, sel),
               'the queued job %s shows its wait reason' % first)
    for _ in range(5):
        shown = b.eval(sel + '.textContent')
        why = api.get('v1/jobs/%s/why' % first)['why']
        if shown == 'waits: ' + why:
            return 'why: %s shows "%s"' % (first, shown)
        time.sleep(1)
    raise CheckFailed('why: the row of %s shows %r, /why says %r' % (first, shown, why))


def check_paging(b, api, url):
    queued = [j['name'] for j in api.get('v1/jobs?state=queued&limit=100000')['jobs']]
    if len(queued) <= 200:
        raise CheckFailed('paging: the daemon has only %d queued jobs (the test needs over 200)'
                          % len(queued))
    b.wait_for("document.querySelectorAll('#jobs-body tr.job-row').length === 200",
               'the first page of the queued view holds 200 rows')
    if row_names(b) != queued[:200]:
        raise CheckFailed('paging: page 1 is not the API\'s first 200 queued jobs')
    b.wait_for("!document.getElementById('jobs-next').disabled", 'the next-page button enables')
    b.eval("document.getElementById('jobs-next').click()")
    want = queued[200:400]
    b.wait_for("(function(){var r=document.querySelectorAll('#jobs-body tr.job-row');"
               "return r.length === %d && r[0].getAttribute('data-job') === %s;})()"
               % (len(want), js(want[0])), 'page 2 shows queued jobs 201 to %d' % len(queued))
    if row_names(b) != want:
        raise CheckFailed('paging: page 2 is not the API\'s queued jobs 201 to %d' % len(queued))
    # The page read page 2 from /v1/jobs with a cursor, and that read gives those jobs.
    asked = b.eval("performance.getEntriesByType('resource').map(function(e){return e.name;})")
    prefix = url + 'v1/jobs?limit=200&state=queued&cursor='
    with_cursor = [a for a in asked if a.startswith(prefix)]
    if not with_cursor:
        raise CheckFailed('paging: the page did not ask for %s...; its requests of /v1/jobs: %s'
                          % (prefix, [a for a in asked if '/v1/jobs?' in a][-3:]))
    by_cursor = [j['name'] for j in api.get(with_cursor[-1][len(url):])['jobs']]
    if by_cursor != want:
        raise CheckFailed('paging: %s gives other jobs than page 2 shows' % with_cursor[-1])
    pager = b.eval("document.getElementById('jobs-page').textContent")
    expected = '201–%d of %d' % (len(queued), len(queued))
    if pager != expected:
        raise CheckFailed('paging: the pager says %r, expected %r' % (pager, expected))
    b.eval("document.getElementById('jobs-prev').click()")
    b.wait_for("(document.querySelector('#jobs-body tr.job-row')||{getAttribute:function(){}})"
               ".getAttribute('data-job') === %s" % js(queued[0]), 'back to page 1')
    return 'paging: %d queued jobs, page 2 shows "%s"' % (len(queued), pager)


def node_drained(api, node):
    return next(n['drained'] for n in api.get('v1/nodes')['nodes'] if n['name'] == node)


def click_node_action(b, node, action):
    b.wait_for("document.querySelector('tr.node-row[data-node=%s] "
               "button[data-action=%s]:not([disabled])')" % (js(node), js(action)),
               'the %s button of %s' % (action, node))
    b.eval("document.querySelector('tr.node-row[data-node=%s] button[data-action=%s]').click()"
           % (js(node), js(action)))


def last_action(b):
    return b.eval("(function(){var l=document.querySelector('#action-log li');"
                  "return l ? [l.className, l.textContent] : null;})()")


def check_actions(b, api, token, url):
    node = api.get('v1/nodes')['nodes'][0]['name']
    click_node_action(b, node, 'drain')
    b.wait_for("(document.querySelector('#action-log li')||{}).className === 'action-error'",
               'a drain without a token reports its error')
    kind, text = last_action(b)
    if '401' not in text or 'unauthorized' not in text:
        raise CheckFailed('actions: the drain without a token logged %r (expected the API\'s 401)'
                          % text)
    if node_drained(api, node):
        raise CheckFailed('actions: %s is drained after a refused drain' % node)
    b.eval("document.getElementById('token-input').value = %s;"
           "document.getElementById('token-use').click()" % js(token))
    stored = b.eval("sessionStorage.getItem('hetsched.dashboard.token')")
    if stored != token:
        raise CheckFailed('actions: the token is not in sessionStorage (%r)' % stored)
    if token in b.eval('location.href'):
        raise CheckFailed('actions: the token is in the URL')
    click_node_action(b, node, 'drain')
    drained = "document.querySelector('tr.node-row[data-node=%s]').getAttribute('data-drained')"
    b.wait_for(drained % js(node) + " === 'true'",
               'the page shows %s drained after its drain button' % node)
    if not node_drained(api, node):
        raise CheckFailed('actions: the page shows %s drained, /v1/nodes does not' % node)
    kind, text = last_action(b)
    if kind != 'action-ok':
        raise CheckFailed('actions: the drain logged %r' % text)
    click_node_action(b, node, 'undrain')
    b.wait_for(drained % js(node) + " === 'false'", 'the page shows %s undrained' % node)
    if node_drained(api, node):
        raise CheckFailed('actions: /v1/nodes still has %s drained after the undrain' % node)

    victim = api.get('v1/jobs?state=queued&limit=1')['jobs'][0]['name']
    button = ("document.querySelector('tr.job-row[data-job=%s] button[data-action=cancel]')"
              % js(victim))
    b.wait_for(button, 'the cancel button of %s' % victim)
    b.eval(button + '.click()')
    b.wait_for("(%s||{}).getAttribute && %s.getAttribute('data-armed') === 'true'"
               % (button, button), 'the cancel button asks to confirm')
    if api.get('v1/jobs/' + victim)['state'] != 'queued':
        raise CheckFailed('actions: one click on cancel already cancelled %s' % victim)
    b.eval(button + '.click()')
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while api.get('v1/jobs/' + victim)['state'] != 'cancelled':
        if time.monotonic() > deadline:
            raise CheckFailed('actions: %s is not cancelled after the confirmed click' % victim)
        time.sleep(0.2)
    return node, victim


def power_chart(b):
    """The power chart's (number of points, time of the first point)."""
    return b.eval("(function(){var c=document.getElementById('chart-power');"
                  "return [Number(c.getAttribute('data-points')),"
                  "Number(c.getAttribute('data-first'))];})()")


def wait_chart_holds(b, before, where):
    points, first = before
    b.wait_for("(function(){var c=document.getElementById('chart-power');"
               "return Number(c.getAttribute('data-points')) >= %d && "
               "Number(c.getAttribute('data-first')) <= %r;})()" % (points, first + 1),
               '%s the power chart has the %d points it had, from %.1f on'
               % (where, points, first))
    return power_chart(b)


def check_reload(b, url, node, victim):
    b.wait_for("Number(document.getElementById('chart-power').getAttribute('data-points')) >= 5",
               'the power chart has 5 points')
    chart = power_chart(b)
    b.eval("document.querySelector('tr.node-row[data-node=%s] button[data-action=history]').click()"
           % js(node))
    history = ("Array.from(document.querySelectorAll('#node-history tr.history-row'))"
               ".map(function(r){return r.textContent;}).join('\\n')")
    b.wait_for("/drain/.test(%s)" % history, 'the history of %s shows its drain' % node)
    # A mark on the old document tells it from the reloaded one.
    b.eval('window.beforeReload = true')
    b.send('Page.reload', {'ignoreCache': True})
    b.wait_for("!window.beforeReload && document.readyState === 'complete'", 'the page reloads')
    b.wait_for("/drain/.test(%s)" % history,
               'after a reload the history of %s (from the database) shows its drain' % node)
    state = b.eval("document.getElementById('token-state').textContent")
    if state != 'token set':
        raise CheckFailed('reload: the token state reads %r after a reload' % state)
    if b.eval("document.getElementById('jobs-state').value") != 'queued':
        raise CheckFailed('reload: the jobs view is not kept across a reload')
    show_view(b, 'cancelled')
    b.wait_for("document.querySelector('#jobs-body tr.job-row[data-job=%s]')" % js(victim),
               'the cancelled view lists %s' % victim)
    after = wait_chart_holds(b, chart, 'after a reload')
    return ('reload: token, view and %s\'s history kept; %s listed as cancelled; power chart %d '
            'points before, %d after' % (node, victim, chart[0], after[0]))


def check_new_tab(b, url):
    before = power_chart(b)
    b.open_page()
    b.load(url)
    after = wait_chart_holds(b, before, 'in a new tab')
    return ('charts: a new tab\'s power chart has %d points from %.0f s ago on (the tab before '
            'had %d)' % (after[0], time.time() - after[1], before[0]))


def main():
    if len(sys.argv) != 3:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    url, out = sys.argv[1], sys.argv[2]
    token = os.environ.get('DASHBOARD_TOKEN', '')
    chromium = os.environ.get('CHROMIUM', 'chromium')
    if not shutil.which(chromium):
        print("SKIP: '%s' is not installed (Debian: apt-get install chromium); dashboard not driven"
              % chromium)
        return 77
    if not token:
        print('usage: DASHBOARD_TOKEN (an admin token) must be set', file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    api = Api(url, token)

    def overdue(signum, frame):
        raise CheckFailed('the whole check took over %d s' % OVERALL_TIMEOUT_S)

    signal.signal(signal.SIGALRM, overdue)
    signal.alarm(OVERALL_TIMEOUT_S)
    profile = tempfile.mkdtemp(prefix='dashboard-cdp.')
    log = open(os.path.join(out, 'chromium.log'), 'w')
    b = None
    try:
        b = Browser(chromium, profile, log)
        b.open_page()
        b.load(url)
        print(check_power(b, api))
        print(check_live_pages(b, api))
        print(check_why(b, api))
        print(check_paging(b, api, url))
        node, victim = check_actions(b, api, token, url)
        print('actions: a drain without a token showed the 401; drain, undrain of %s and a '
              'cancel of %s went through' % (node, victim))
        print(check_reload(b, url, node, victim))
        print(check_new_tab(b, url))
        shot = b.send('Page.captureScreenshot', {'format': 'png'})
        with open(os.path.join(out, 'dashboard-actions.png'), 'wb') as f:
            f.write(base64.b64decode(shot['data']))
        errors = b.page_errors()
        if errors:
            raise CheckFailed('the page reported errors:\n  ' + '\n  '.join(errors[:10]))
    except (CheckFailed, urllib.error.URLError, OSError) as e:
        print('FAIL: %s' % e, file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        if b:
            b.close()
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
    print('dashboard interaction check passed (%s)' % url)
    return 0


if __name__ == '__main__':
    sys.exit(main())
