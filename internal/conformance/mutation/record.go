package mutation

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Record is the last recorded mutation run: the figures docs/conformance.md
// quotes and the self-test prints, kept in killrates.json beside this file.
type Record struct {
	Command   string    `json:"command"`
	Date      string    `json:"date"`
	Duration  string    `json:"duration"`
	Summaries []Summary `json:"summaries"`
	Survivors []string  `json:"survivors"`
	// Contract is the kill rate on the contract-fault corpus
	// (internal/conformance/faults), per role, apart from the syntactic
	// mutants and without behaviour examples; nil when not run.
	Contract []ContractSummary `json:"contract,omitempty"`
	// ContractDate is when the corpus was last run (mutate --corpus-only
	// records it without touching the mutants' figures).
	ContractDate string `json:"contract_date,omitempty"`
}

// ContractSummary is one role's figures on the contract-fault corpus.
type ContractSummary struct {
	Role   string  `json:"role"`
	Faults int     `json:"faults"`
	Killed int     `json:"killed"`
	Rate   float64 `json:"kill_rate"`
	// Survivors are the faults no case citing their rule killed.
	Survivors []string `json:"survivors"`
}

//go:embed killrates.json
var recorded []byte

// Recorded returns the figures recorded in the repository.
func Recorded() (*Record, error) {
	var r Record
	if err := json.Unmarshal(recorded, &r); err != nil {
		return nil, fmt.Errorf("internal/conformance/mutation/killrates.json: %w", err)
	}
	return &r, nil
}

// ReadRecord reads a record written by [Record.Write].
func ReadRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// NewRecord makes the record of a run.
func NewRecord(command string, d time.Duration, rs []Result) *Record {
	rec := &Record{Command: command, Date: time.Now().UTC().Format("2006-01-02"), Duration: d.Round(time.Second).String(), Summaries: Summarize(rs), Survivors: []string{}}
	for _, r := range rs {
		if r.Verdict == Survived {
			rec.Survivors = append(rec.Survivors, r.Pos()+" "+r.Key+" "+r.Desc)
		}
	}
	return rec
}

// Write writes the record to path through a temporary file, so a failed
// write leaves the old record.
func (r *Record) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".killrates-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
