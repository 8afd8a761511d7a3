// Command pushfleet holds N push subscribers (`GET {base}/push`, docs/push.md) open against one
// Heureka node, makes K status writes and times each write's delta to every subscriber.
// bench/push_fleet.py builds and drives it; standard library only.
//
// Protocol with the driver, one JSON document a line on stdout:
//
//  1. It connects the N subscribers (at most -concurrency connecting at once, from the
//     -sources loopback addresses in turn) and waits, at most -connect-timeout, until each has
//     received its snapshot or failed. Then it prints {"phase":"ready",…} and waits for a line
//     on stdin (the driver reads the server's RSS meanwhile).
//  2. A quiet window (-quiet), the server's and its own CPU time read from /proc before and
//     after; then the K writes: write k is sent once write k-1 has reached every subscriber
//     that follows its application (or -write-timeout passed) and -spacing has elapsed since;
//     then a second quiet window as long as the write phase. It prints {"phase":"done",…}.
//  3. It exits, which closes every connection, when stdin closes or a line "exit" arrives.
//
// The client must cost little next to the server, with which it shares the cores: a goroutine
// per subscriber only connects and sends the request; then one thread reads every socket from
// one epoll set (level-triggered, one read of up to 64 KiB per readiness, so one read a delta
// and a share of one epoll_wait), decoding the answer's head, its HTTP/1.1 chunks and the SSE
// frames itself, keeping a delta's data and only the first bytes of a snapshot's. Times are Go's
// monotonic clock, in the one process that sends the writes and reads the deltas.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

var t0 = time.Now()

func now() int64 { return int64(time.Since(t0)) }

// target is an instance whose status the writes flip.
type target struct {
	App string
	ID  string
}

type record struct {
	at  int64 // ns since t0; 0 = not received
	oos bool  // the delta carried "status":"OUT_OF_SERVICE"
}

type subscriber struct {
	index   int
	app     string // followed application, "" = every one
	snapAt  int64
	snapSeq int64
	snapLen int64
	failed  string
	ended   atomic.Bool
	recs    []record // by write index
	extra   int      // deltas outside the writes' range
}

type fleet struct {
	base         *url.URL
	follow       string
	apps         []string
	sources      []string
	subs         []*subscriber
	writes       int
	seqBase      atomic.Int64 // the snapshots' seq; delta for write k has seq base+k+1
	delivered    []atomic.Int64
	snapshots    atomic.Int64
	resolved     atomic.Int64
	statusMarker []byte
	failures     map[string]int
	failuresMu   sync.Mutex
}

func (f *fleet) fail(s *subscriber, what string) {
	f.failuresMu.Lock()
	f.failures[what]++
	f.failuresMu.Unlock()
	if s != nil && s.failed == "" {
		s.failed = what
	}
}

// connect opens one subscriber's stream: it dials, sends the request, and hands the socket to
// the reading loop. The gate bounds the subscribers between connecting and their snapshot, so
// that at most -concurrency snapshots are in flight at once; the loop releases it.
func (f *fleet) connect(s *subscriber, gate chan struct{}, deadline time.Time, handover chan<- *stream) {
	gate <- struct{}{}
	src := f.sources[s.index%len(f.sources)]
	dialer := net.Dialer{Timeout: time.Until(deadline), LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	conn, err := dialer.Dial("tcp", f.base.Host)
	if err != nil {
		f.fail(s, "connect: "+shortErr(err))
		f.resolve(gate)
		return
	}
	path := f.base.Path + "/push"
	if s.app != "" {
		path += "?app=" + url.QueryEscape(s.app)
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + f.base.Host +
		"\r\nAccept: text/event-stream\r\nUser-Agent: pushfleet\r\n\r\n"
	conn.SetWriteDeadline(deadline)
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		f.fail(s, "request: "+shortErr(err))
		f.resolve(gate)
		return
	}
	// The loop reads the socket from now on: a duplicate of its descriptor, the original closed
	// (which takes it out of Go's own poller).
	fd := -1
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err == nil {
		raw.Control(func(d uintptr) { fd, err = syscall.Dup(int(d)) })
	}
	conn.Close()
	if err != nil || fd < 0 {
		f.fail(s, "dup: "+shortErr(err))
		f.resolve(gate)
		return
	}
	syscall.SetNonblock(fd, true)
	handover <- &stream{fd: fd, s: s, p: parser{f: f, s: s}}
}

func (f *fleet) resolve(gate chan struct{}) {
	f.resolved.Add(1)
	<-gate
}

// stream is one subscriber's socket as the loop reads it: the answer's head, then HTTP/1.1
// chunks, whose data is the SSE text.
type stream struct {
	fd       int
	s        *subscriber
	p        parser
	state    int // inHead, inSize, inData, inCRLF
	head     []byte
	size     []byte
	left     int
	resolved bool
	closed   bool
}

const (
	inHead = iota
	inSize
	inData
	inCRLF
)

// loop reads every subscriber's socket from one epoll set, on one thread: a read per
// readiness, at most 64 KiB, so a delta costs one read (and a share of one epoll_wait).
func (f *fleet) loop(handover <-chan *stream, gate chan struct{}, stop <-chan struct{}) {
	runtime.LockOSThread()
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pushfleet: epoll:", err)
		os.Exit(1)
	}
	byFd := map[int32]*stream{}
	events := make([]syscall.EpollEvent, 1024)
	buf := make([]byte, 64<<10)
	for {
		for more := true; more; {
			select {
			case st := <-handover:
				ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(st.fd)}
				if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, st.fd, &ev); err != nil {
					f.fail(st.s, "epoll add: "+err.Error())
					syscall.Close(st.fd)
					f.resolve(gate)
					continue
				}
				byFd[int32(st.fd)] = st
			case <-stop:
				return
			default:
				more = false
			}
		}
		// Raw system calls: this thread does nothing else, and the runtime's bookkeeping around
		// an ordinary one (and the monitor thread it wakes) cost as much as the calls here.
		r1, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(epfd),
			uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 10, 0, 0)
		n := int(r1)
		if errno != 0 {
			if errno != syscall.EINTR {
				fmt.Fprintln(os.Stderr, "pushfleet: epoll_wait:", errno)
				os.Exit(1)
			}
			n = 0
		}
		for i := 0; i < n; i++ {
			st := byFd[events[i].Fd]
			if st == nil || st.closed {
				continue
			}
			r1, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(st.fd),
				uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			r := int(r1)
			if errno == syscall.EAGAIN || errno == syscall.EINTR {
				continue
			}
			if errno != 0 || r <= 0 {
				why := "EOF"
				if errno != 0 {
					why = errno.Error()
				}
				syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, st.fd, nil)
				f.end(st, gate, why)
				continue
			}
			if msg := st.feed(buf[:r]); msg != "" {
				syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, st.fd, nil)
				f.end(st, gate, msg)
				continue
			}
			if st.p.snapDone && !st.resolved {
				st.resolved = true
				f.resolve(gate)
			}
		}
	}
}

// end closes a stream that ended or failed.
func (f *fleet) end(st *stream, gate chan struct{}, why string) {
	st.closed = true
	syscall.Close(st.fd)
	if !st.p.snapDone {
		f.fail(st.s, "before snapshot: "+why)
	} else {
		st.s.ended.Store(true)
		f.fail(st.s, "stream ended: "+why)
	}
	if !st.resolved {
		st.resolved = true
		f.resolve(gate)
	}
}

// feed decodes the answer: its head (the status must be 200), then chunks. A non-empty
// result says why the stream cannot go on.
func (st *stream) feed(b []byte) string {
	for len(b) > 0 {
		switch st.state {
		case inHead:
			st.head = append(st.head, b...)
			end := bytes.Index(st.head, []byte("\r\n\r\n"))
			if end < 0 {
				if len(st.head) > 16<<10 {
					return "answer head too long"
				}
				return ""
			}
			status := st.head[:bytes.IndexByte(st.head, '\r')]
			if !bytes.HasPrefix(status, []byte("HTTP/1.1 200")) {
				fields := strings.Fields(string(status))
				if len(fields) > 1 {
					return "status " + fields[1]
				}
				return "bad status line"
			}
			if !bytes.Contains(bytes.ToLower(st.head[:end]), []byte("transfer-encoding: chunked")) {
				return "answer not chunked"
			}
			b = st.head[end+4:]
			st.head = nil
			st.state = inSize
		case inSize:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				st.size = append(st.size, b...)
				return ""
			}
			st.size = append(st.size, b[:i]...)
			b = b[i+1:]
			line := string(bytes.TrimSpace(st.size))
			if j := strings.IndexByte(line, ';'); j >= 0 {
				line = line[:j]
			}
			st.size = st.size[:0]
			n, err := strconv.ParseInt(line, 16, 64)
			if err != nil {
				return "bad chunk size"
			}
			if n == 0 {
				return "last chunk"
			}
			st.left, st.state = int(n), inData
		case inData:
			n := st.left
			if n > len(b) {
				n = len(b)
			}
			st.p.feed(b[:n])
			b, st.left = b[n:], st.left-n
			if st.left == 0 {
				st.state = inCRLF
			}
		case inCRLF:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				return ""
			}
			b = b[i+1:]
			st.state = inSize
		}
	}
	return ""
}

func shortErr(err error) string {
	if err == io.EOF {
		return "EOF"
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "timeout"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// parser reads SSE frames: `event:`, `id:`, `data:` lines, a blank line ends a frame, a line
// starting with ':' is a comment. Only a delta's data is kept (it is small); a snapshot's is
// counted and dropped.
type parser struct {
	f        *fleet
	s        *subscriber
	line     []byte
	lineLen  int
	event    []byte
	id       []byte
	data     []byte
	snapDone bool
	frameLen int64
}

const keepCap = 256

func (p *parser) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		// A delta's lines are kept whole (its data is a few KiB); a snapshot's are cut short.
		limit := keepCap
		if string(p.event) == "delta" {
			limit = 1 << 20
		}
		if room := limit - len(p.line); room > 0 {
			if room > len(part) {
				room = len(part)
			}
			p.line = append(p.line, part[:room]...)
		}
		p.lineLen += len(part)
		if i < 0 {
			return
		}
		p.frameLen += int64(p.lineLen) + 1
		p.endLine()
		b = b[i+1:]
	}
}

func (p *parser) endLine() {
	line := p.line
	if p.lineLen == 0 {
		p.dispatch()
	} else if line[0] == ':' {
		// comment (keep-alive)
	} else if bytes.HasPrefix(line, []byte("event:")) {
		p.event = append(p.event[:0], bytes.TrimSpace(line[6:])...)
	} else if bytes.HasPrefix(line, []byte("id:")) {
		p.id = append(p.id[:0], bytes.TrimSpace(line[3:])...)
	} else if bytes.HasPrefix(line, []byte("data:")) {
		p.data = append(p.data, line[5:]...)
	}
	p.line = p.line[:0]
	p.lineLen = 0
}

func (p *parser) dispatch() {
	at := now()
	seq := int64(-1)
	if i := bytes.LastIndexByte(p.id, '-'); i >= 0 {
		if v, err := strconv.ParseInt(string(p.id[i+1:]), 10, 64); err == nil {
			seq = v
		}
	}
	f, s := p.f, p.s
	switch string(p.event) {
	case "snapshot":
		if !p.snapDone {
			p.snapDone = true
			s.snapAt = at
			s.snapSeq = seq
			s.snapLen = p.frameLen
			f.seqBase.Store(seq)
			f.snapshots.Add(1)
		}
	case "delta":
		k := seq - f.seqBase.Load() - 1
		if seq < 0 || k < 0 || k >= int64(f.writes) {
			s.extra++
		} else if s.recs[k].at == 0 {
			s.recs[k] = record{at: at, oos: bytes.Contains(p.data, f.statusMarker)}
			f.delivered[k].Add(1)
		}
	}
	p.event = p.event[:0]
	p.id = p.id[:0]
	p.data = p.data[:0]
	p.frameLen = 0
}

// cpuTicks is utime+stime of a process, in clock ticks.
func cpuTicks(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[i+1:]))
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + st
}

type window struct {
	Seconds        float64 `json:"seconds"`
	ServerCPU      float64 `json:"server_cpu_s"`
	ClientCPU      float64 `json:"client_cpu_s"`
	serverT, selfT int64
	start          time.Time
}

func openWindow(serverPid string) *window {
	return &window{serverT: cpuTicks(serverPid), selfT: cpuTicks("self"), start: time.Now()}
}

func (w *window) close(serverPid string, hz float64) *window {
	w.Seconds = time.Since(w.start).Seconds()
	w.ServerCPU = float64(cpuTicks(serverPid)-w.serverT) / hz
	w.ClientCPU = float64(cpuTicks("self")-w.selfT) / hz
	return w
}

type writeResult struct {
	Index     int     `json:"index"`
	Target    string  `json:"target"`
	Value     string  `json:"value"`
	Status    int     `json:"http_status"`
	AnswerMs  float64 `json:"answer_ms"`
	Expected  int     `json:"expected"`
	Delivered int     `json:"delivered"`
	FirstMs   float64 `json:"first_ms"`
	MedianMs  float64 `json:"median_ms"`
	LastMs    float64 `json:"last_ms"`
	WrongBody int     `json:"wrong_status_in_delta"`
	sentAt    int64
}

func main() {
	base := flag.String("base", "", "the server's base URL, e.g. http://127.0.0.1:8761/eureka")
	n := flag.Int("n", 200, "subscribers")
	follow := flag.String("follow", "all", "all: every application; one: subscriber i follows -apps[i % len]")
	appsFlag := flag.String("apps", "", "comma list of the registry's applications")
	targetsFlag := flag.String("targets", "", "comma list of APP/ID whose status the writes flip, one per application")
	sources := flag.String("sources", "127.0.0.1", "comma list of local addresses to connect from")
	concurrency := flag.Int("concurrency", 256, "subscribers between connecting and their snapshot at once")
	connectTimeout := flag.Duration("connect-timeout", 120*time.Second, "every subscriber has its snapshot by then, or counts as failed")
	writes := flag.Int("writes", 20, "status writes")
	spacing := flag.Duration("spacing", 300*time.Millisecond, "pause between a write's full delivery and the next write")
	writeTimeout := flag.Duration("write-timeout", 10*time.Second, "a write not delivered to every subscriber by then counts the rest as missed")
	quiet := flag.Duration("quiet", 6*time.Second, "the quiet window before the writes")
	serverPid := flag.String("server-pid", "", "the server's pid, for its CPU time")
	hz := flag.Float64("clk-tck", 100, "clock ticks per second of /proc/PID/stat")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the write phase here (diagnosis)")
	flag.Parse()

	u, err := url.Parse(*base)
	if err != nil || *base == "" {
		fmt.Fprintln(os.Stderr, "pushfleet: -base is required")
		os.Exit(2)
	}
	apps := strings.Split(*appsFlag, ",")
	var targets []target
	for _, t := range strings.Split(*targetsFlag, ",") {
		if a, id, ok := strings.Cut(t, "/"); ok {
			targets = append(targets, target{a, id})
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(os.Stderr, "pushfleet: -targets is required")
		os.Exit(2)
	}
	f := &fleet{
		base: u, follow: *follow, apps: apps, sources: strings.Split(*sources, ","),
		writes: *writes, delivered: make([]atomic.Int64, *writes),
		statusMarker: []byte(`"status":"OUT_OF_SERVICE"`), failures: map[string]int{},
	}
	f.seqBase.Store(-1)
	for i := 0; i < *n; i++ {
		s := &subscriber{index: i, recs: make([]record, *writes), snapSeq: -1}
		if *follow == "one" {
			s.app = apps[i%len(apps)]
		}
		f.subs = append(f.subs, s)
	}
	out := json.NewEncoder(os.Stdout)
	stdin := bufio.NewScanner(os.Stdin)

	// Phase 1: connect.
	connect := openWindow(*serverPid)
	deadline := time.Now().Add(*connectTimeout)
	gate := make(chan struct{}, *concurrency)
	handover := make(chan *stream, *concurrency)
	stop := make(chan struct{})
	go f.loop(handover, gate, stop)
	for _, s := range f.subs {
		go f.connect(s, gate, deadline, handover)
	}
	for f.resolved.Load() < int64(*n) && time.Now().Before(deadline.Add(time.Second)) {
		time.Sleep(10 * time.Millisecond)
	}
	connect.close(*serverPid, *hz)
	for _, s := range f.subs {
		if atomic.LoadInt64(&s.snapAt) == 0 && s.failed == "" {
			f.fail(s, "no snapshot by the deadline")
		}
	}
	// Subscribers still without a snapshot past the deadline are failures; closing them makes
	// their goroutines end.
	var snapTimes []float64
	var snapBytes int64
	for _, s := range f.subs {
		if s.snapAt > 0 {
			snapTimes = append(snapTimes, float64(s.snapAt)/1e6)
			snapBytes = s.snapLen
		}
	}
	sort.Float64s(snapTimes)
	var rs runtime.MemStats
	runtime.ReadMemStats(&rs)
	out.Encode(map[string]any{
		"phase": "ready", "subscribers": *n, "snapshots": f.snapshots.Load(),
		"failures": f.failureCopy(), "connect": connect,
		"last_snapshot_ms": last(snapTimes), "snapshot_frame_bytes": snapBytes,
		"snapshot_seq": f.seqBase.Load(), "goroutines": runtime.NumGoroutine(),
		"client_heap_mib": float64(rs.HeapInuse) / (1 << 20),
	})
	if !stdin.Scan() || strings.TrimSpace(stdin.Text()) == "exit" {
		return
	}

	// Phase 2: quiet, writes, quiet.
	distinctSeqs := map[int64]int{}
	for _, s := range f.subs {
		if s.snapAt > 0 {
			distinctSeqs[s.snapSeq]++
		}
	}
	quietBefore := openWindow(*serverPid)
	time.Sleep(*quiet)
	quietBefore.close(*serverPid, *hz)

	client := &http.Client{Timeout: *writeTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	results := make([]writeResult, *writes)
	if *cpuProfile != "" {
		if pf, err := os.Create(*cpuProfile); err == nil {
			pprof.StartCPUProfile(pf)
			defer pf.Close()
		}
	}
	writing := openWindow(*serverPid)
	for k := 0; k < *writes; k++ {
		t := targets[(k/2)%len(targets)]
		method, value := "PUT", "OUT_OF_SERVICE"
		path := f.base.Path + "/apps/" + t.App + "/" + url.PathEscape(t.ID) + "/status"
		if k%2 == 1 {
			method, value = "DELETE", "UP"
		} else {
			path += "?value=OUT_OF_SERVICE"
		}
		expected := 0
		for _, s := range f.subs {
			if s.snapAt > 0 && !s.ended.Load() && (s.app == "" || s.app == t.App) {
				expected++
			}
		}
		r := writeResult{Index: k, Target: t.App + "/" + t.ID, Value: value, Expected: expected}
		req, _ := http.NewRequest(method, "http://"+f.base.Host+path, nil)
		r.sentAt = now()
		resp, err := client.Do(req)
		r.AnswerMs = float64(now()-r.sentAt) / 1e6
		if err != nil {
			f.fail(nil, "write: "+shortErr(err))
		} else {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			r.Status = resp.StatusCode
		}
		until := time.Now().Add(*writeTimeout)
		for f.delivered[k].Load() < int64(expected) && time.Now().Before(until) {
			time.Sleep(5 * time.Millisecond) // a coarse poll: the loop stamps the deliveries
		}
		results[k] = r
		time.Sleep(*spacing)
	}
	writing.close(*serverPid, *hz)
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	quietAfter := openWindow(*serverPid)
	time.Sleep(time.Duration(writing.Seconds * float64(time.Second)))
	quietAfter.close(*serverPid, *hz)

	// Latencies: every (subscriber, write) pair the write was for.
	var all []float64
	missed, extra, ended := 0, 0, 0
	for k := range results {
		r := &results[k]
		t := targets[(k/2)%len(targets)]
		var lat []float64
		for _, s := range f.subs {
			if s.snapAt == 0 || (s.app != "" && s.app != t.App) {
				continue
			}
			rec := s.recs[k]
			if rec.at == 0 {
				missed++
				continue
			}
			ms := float64(rec.at-r.sentAt) / 1e6
			lat = append(lat, ms)
			if rec.oos != (r.Value == "OUT_OF_SERVICE") {
				r.WrongBody++
			}
		}
		sort.Float64s(lat)
		r.Delivered = len(lat)
		if len(lat) > 0 {
			r.FirstMs, r.MedianMs, r.LastMs = lat[0], pct(lat, 0.5), lat[len(lat)-1]
		}
		all = append(all, lat...)
	}
	for _, s := range f.subs {
		extra += s.extra
		if s.ended.Load() {
			ended++
		}
	}
	sort.Float64s(all)
	runtime.ReadMemStats(&rs)
	out.Encode(map[string]any{
		"phase": "done", "writes": results, "pairs": len(all), "missed": missed,
		"unexpected_deltas": extra, "streams_ended": ended, "snapshot_seqs": len(distinctSeqs),
		"latency_ms": map[string]float64{
			"p50": pct(all, 0.5), "p90": pct(all, 0.9), "p99": pct(all, 0.99),
			"p999": pct(all, 0.999), "max": last(all),
		},
		"quiet_before": quietBefore, "write_phase": writing, "quiet_after": quietAfter,
		"failures": f.failureCopy(), "client_heap_mib": float64(rs.HeapInuse) / (1 << 20),
		"goroutines": runtime.NumGoroutine(),
	})
	for stdin.Scan() {
		if strings.TrimSpace(stdin.Text()) == "exit" {
			break
		}
	}
}

func (f *fleet) failureCopy() map[string]int {
	f.failuresMu.Lock()
	defer f.failuresMu.Unlock()
	c := make(map[string]int, len(f.failures))
	for k, v := range f.failures {
		c[k] = v
	}
	return c
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func last(sorted []float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)-1]
}
