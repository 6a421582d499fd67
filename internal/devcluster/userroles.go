package devcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/deploy/rbac"
)

// installUserRoles creates the ClusterRoles an install gives backfill's
// users (deploy/rbac): TFJobs in the built-in admin, edit and view roles,
// which the controller-manager aggregates, and the cluster-wide reads of
// doctor. A namespace user of the local cluster then meets what one of a
// real install does.
func installUserRoles(ctx context.Context, c client.Client) error {
	for _, manifest := range [][]byte{rbac.TFJobRoles, rbac.ClusterView} {
		roles, err := decodeClusterRoles(manifest)
		if err != nil {
			return err
		}
		for _, role := range roles {
			if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
			}
		}
	}
	return nil
}

// decodeClusterRoles reads the ClusterRoles of a multi-document manifest.
func decodeClusterRoles(manifest []byte) ([]*rbacv1.ClusterRole, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var roles []*rbacv1.ClusterRole
	for {
		role := &rbacv1.ClusterRole{}
		err := dec.Decode(role)
		if errors.Is(err, io.EOF) {
			return roles, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding the users' ClusterRoles: %w", err)
		}
		if role.Kind != "ClusterRole" || role.Name == "" {
			return nil, fmt.Errorf("decoding the users' ClusterRoles: a %q named %q is no ClusterRole", role.Kind, role.Name)
		}
		roles = append(roles, role)
	}
}
