

jit_lossmain.1Í
A€€ „€€€
B€€ €€€€
C€€ €€€
D€€ •€€€
E€€ €€€
F€€ €€€
G€€ –€€€
H€€ ‚€€€
I€€ €€€
J€€ —€€€
K€€ ƒ€€€
L€€ €€€
M€€ ”€€€
N€€ Œ€€€
O€€ “€€€
P€€ ‹€€€
Q€€ ’€€€
R€€ Š€€€
S€€ ‘€€€
T€€ †€€€
U€€ ‡€€€
V€€ ˆ€€€
W€€ ‰€€€
X  …€€€€€8JC€€ JT€€ €€8JF€€ JU€€ €€8JI€€ JV€€ €€8JL€€ JW€€ €€(JB€€ €€(0JE€€ €€(0JH€€ €€(0JK€€ €€(0JA€€ 	 8JX  X
€€(JD€€ JG€€€€ JJ€€€€ JM€€€€ JN€€ €€ JO€€ €€ JP€€€€ JQ€€€€ JR€€€€ JS€€€€ "ø
Dmain.1"wrapped_tanh
Gmain.1"wrapped_tanh.1
Jmain.1"wrapped_tanh.2
!Mmain.1"multiply_add_fusion.3
Nmain.1"ynn_fusion.5
Jmain.1"wrapped_tanh.2
#Mmain.1"multiply_add_fusion.3
Nmain.1"ynn_fusion.5
%Omain.1"multiply_add_fusion.2(N
Pmain.1"ynn_fusion.3
Gmain.1"wrapped_tanh.1
#Omain.1"multiply_add_fusion.2
Pmain.1"ynn_fusion.3
%Qmain.1"multiply_add_fusion.1(P
Rmain.1"ynn_fusion.1
Dmain.1"wrapped_tanh
#Qmain.1"multiply_add_fusion.1
Rmain.1"ynn_fusion.1
#Smain.1"multiply_add_fusion(R
!Smain.1"multiply_add_fusion
*T*U*V*W*B*E*H*K*A*	X*	
DGJMN