package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/backfill-dev/backfill/internal/version"
)

// addVersion gives root the `version` command and the --version flag.
func addVersion(root *cobra.Command) {
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.DisplayName}} {{.Version}}\n")
	root.AddCommand(newVersionCommand())
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print backfill's version, the commit it was built from and its Go version",
		Long: `Print the release version (the Helm chart's appVersion, which is also the
image's tag), the git commit the binary was built from, whether that tree
had uncommitted changes, and the Go toolchain and platform. A build with
no release version says "dev".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, outputTable, outputJSON); err != nil {
				return err
			}
			return printVersion(cmd.OutOrStdout(), version.Get(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

// printVersion writes info as aligned fields or, with -o json, as JSON.
func printVersion(out io.Writer, info version.Info, format string) error {
	if format == outputJSON {
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the version: %w", err)
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	}
	tw := newTable(out)
	fmt.Fprintf(tw, "Version:\t%s\n", info.Version)
	fmt.Fprintf(tw, "Commit:\t%s\n", orNone(info.Commit))
	fmt.Fprintf(tw, "Modified:\t%t\n", info.Modified)
	fmt.Fprintf(tw, "Go:\t%s\n", info.GoVersion)
	fmt.Fprintf(tw, "Platform:\t%s\n", info.Platform)
	return tw.Flush()
}
