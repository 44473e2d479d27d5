package auth

import (
	"fmt"
)

// Assume returns the identity a request of client c would be given that
// names end user user (with role, for a user=jwt client, the role its
// verified user token carries) — or the error the middleware would refuse
// such a request with. `gateway policy explain` and the operator console
// ask the admission step about this identity, so what they explain is
// what a real call of c would meet.
func (a *Authenticator) Assume(c Client, user, role string) (Identity, error) {
	if !validUser(user) {
		return Identity{}, fmt.Errorf("invalid user: at most %d bytes, no control characters", MaxUserLen)
	}
	if role != "" && !validRole(role) {
		return Identity{}, fmt.Errorf("invalid role %q", role)
	}
	id := Identity{Client: c, User: user}
	switch c.UserMode {
	case UserJWT:
		if user == "" {
			if role != "" {
				return Identity{}, fmt.Errorf("a role comes with a user: name the user whose token carries role %q", role)
			}
			id.UserMissing = missingUserToken(a.users.header(), c.Name)
			return id, nil
		}
		if role == "" {
			return Identity{}, fmt.Errorf("client %s has user=jwt: its end users' verified tokens always carry a role (OpenWebUI: admin, user or pending); name it", c.Name)
		}
		id.UserRole = role
	case UserHeaders:
		if role != "" {
			return Identity{}, fmt.Errorf("client %s names its end users by plain headers, which carry no role", c.Name)
		}
	default:
		if user != "" || role != "" {
			return Identity{}, fmt.Errorf("client %s names no end user (its line in the tokens file has no user=jwt or user=headers), so every call it makes has none", c.Name)
		}
	}
	return id, nil
}
